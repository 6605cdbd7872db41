// diagnose --slurm-job without a cluster: the nodes' framed reports survive srun's
// line interleaving, and the cross-rank finding names holders and waiters by rank
// and host. (tests/slurm/srun_diagnose_test.sh runs it on a real Slurm.)
#include "hangbench/slurm_diagnose.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace hangbench::diagnose::slurm {
namespace {

using ::testing::HasSubstr;

diagnose::ProcessSnapshot process(int pid, int ppid, const std::string& comm) {
  diagnose::ProcessSnapshot p;
  p.info.pid = pid;
  p.info.ppid = ppid;
  p.info.comm = comm;
  p.target = true;
  return p;
}

diagnose::Connection tcp(const std::string& local, const std::string& remote, int holder) {
  diagnose::Connection c;
  c.end_a.protocol = "tcp";
  c.end_a.local = local;
  c.end_a.remote = remote;
  c.end_a.state = "ESTABLISHED";
  c.holders_a = {{holder, 5, -1}};
  return c;
}

// Rank 0 on node-a hangs in teardown; its forked child 101 holds the other end;
// rank 1 on node-b is connected to rank 0 over TCP.
std::vector<NodeDiagnosis> two_nodes() {
  NodeDiagnosis a;
  a.host = "node-a";
  a.processes = {{100, 0, "1", "socket_teardown"}, {101, 0, "1", "socket_teardown"}};
  a.snapshot.host = "node-a";
  a.snapshot.processes = {process(100, 90, "socket_teardown"), process(101, 100, "socket_teardown")};
  a.snapshot.connections = {tcp("10.0.0.1:6000", "10.0.0.2:5000", 100)};
  diagnose::Finding f;
  f.rule = "nccl-descriptor-alias";
  f.title = "proxy connection held open by a forked child";
  f.severity = Severity::Hang;
  f.summary = "pid 100 waits; pid 101 holds the other end";
  f.pids = {100, 101};
  a.findings = {f};
  NodeDiagnosis b;
  b.host = "node-b";
  b.processes = {{200, 1, "1", "socket_teardown"}};
  b.snapshot.host = "node-b";
  b.snapshot.processes = {process(200, 190, "socket_teardown")};
  b.snapshot.connections = {tcp("10.0.0.2:5000", "10.0.0.1:6000", 200)};
  return {a, b};
}

TEST(SlurmDiagnose, CrossRankFindingNamesTheHungRankItsHolderAndWhoWaits) {
  auto findings = cross_rank_findings(two_nodes());
  ASSERT_EQ(findings.size(), 1u);
  const auto& f = findings[0];
  EXPECT_EQ(f.rule, "slurm-cross-rank");
  EXPECT_EQ(f.title, "rank 0 is in the hung teardown");
  EXPECT_THAT(f.summary, HasSubstr("rank 0 on node-a (pid 100 socket_teardown) is in the hung teardown"));
  EXPECT_THAT(f.summary, HasSubstr("held by pid 101 (socket_teardown), a child of rank 0's process on node-a"));
  EXPECT_THAT(f.summary, HasSubstr("Waiting on it over TCP: rank 1 on node-b (pid 200 socket_teardown)"));
}

// With --stacks every rank's row carries its Python frame; launchers are listed apart.
TEST(SlurmDiagnose, TextShowsEachRanksPythonFrameAndListsLaunchersApart) {
  JobDiagnosis d;
  d.job_id = "7";
  d.nodes = two_nodes();
  auto& rank0 = d.nodes[0].snapshot.processes[0];
  diagnose::StackThread main{100, "python3", {}, {}};
  main.frames = {{0x1, "recv", "libc.so.6", "", 0, false, false},
                 {0, "wait_for_peer", "python", "/x/train.py", 28, false, true}};
  rank0.stacks.threads = {main};
  d.nodes[1].processes.push_back({210, -1, "", "srun"});
  d.nodes[1].snapshot.processes.push_back(process(210, 1, "srun"));
  d.cross_rank = cross_rank_findings(d.nodes);
  auto text = render_job_text(d);
  EXPECT_THAT(text, HasSubstr("python: `wait_for_peer` (train.py:28)"));
  EXPECT_THAT(text, HasSubstr("node-b pid 210 (srun): srun"));
  EXPECT_LT(text.find("Across ranks:"), text.find("rank  host"));
  std::string python;
  const auto json = job_json(d);
  for (const auto& r : json["ranks"])
    if (r["pid"] == 100) python = r["python"];
  EXPECT_EQ(python, "`wait_for_peer` (train.py:28)");
}

TEST(SlurmDiagnose, NoHangShapeNoCrossRankFinding) {
  auto nodes = two_nodes();
  nodes[0].findings.clear();
  EXPECT_TRUE(cross_rank_findings(nodes).empty());
}

TEST(SlurmDiagnose, NodeReportsSurviveInterleavedLabelledLines) {
  auto nodes = two_nodes();
  std::string a = encode_node(nodes[0]), b = encode_node(nodes[1]);
  // srun --label: "N: " before each line; nodes' lines interleave.
  std::vector<std::string> la, lb;
  std::istringstream ia(a), ib(b);
  for (std::string l; std::getline(ia, l);) la.push_back("0: " + l);
  for (std::string l; std::getline(ib, l);) lb.push_back("1: " + l);
  ASSERT_GT(la.size(), 1u) << "a node's report spans several lines";
  std::string mixed = "srun: warning: something unrelated\n";
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    if (i < lb.size()) mixed += lb[i] + "\n";
    if (i < la.size()) mixed += la[la.size() - 1 - i] + "\n";  // even out of order
  }
  auto decoded = decode_nodes(mixed);
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].host, "node-a");
  EXPECT_EQ(decoded[0].error, "");
  ASSERT_EQ(decoded[0].processes.size(), 2u);
  EXPECT_EQ(decoded[0].processes[1].pid, 101);
  EXPECT_EQ(decoded[0].processes[1].rank, 0);
  ASSERT_EQ(decoded[0].findings.size(), 1u);
  EXPECT_EQ(decoded[0].findings[0].pids, (std::vector<int>{100, 101}));
  EXPECT_EQ(decoded[1].host, "node-b");
  EXPECT_EQ(decoded[1].snapshot.connections.size(), 1u);
  EXPECT_EQ(cross_rank_findings(decoded).size(), 1u);
}

TEST(SlurmDiagnose, AReportWithLinesMissingIsAnErrorNotAGuess) {
  std::string lines = encode_node(two_nodes()[0]);
  lines.erase(0, lines.find('\n') + 1);  // the first part lost
  auto decoded = decode_nodes(lines);
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_THAT(decoded[0].error, HasSubstr("parts of the node's report arrived"));
}

TEST(SlurmDiagnose, JobIdsAreDigitsOrArrayTasks) {
  EXPECT_TRUE(valid_job_id("1234"));
  EXPECT_TRUE(valid_job_id("1234_7"));
  for (const char* bad : {"", "12a", "_1", "1_", "1;rm -rf /", "$(x)"}) EXPECT_FALSE(valid_job_id(bad)) << bad;
}

TEST(SlurmDiagnose, ABadJobIdIsAUsageErrorBeforeAnythingRuns) {
  JobRequest r;
  r.job_id = "12; true";
  auto d = diagnose_job(r);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_THAT(d.error, HasSubstr("--slurm-job wants a job id"));
}

}  // namespace
}  // namespace hangbench::diagnose::slurm
