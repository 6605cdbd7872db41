// nccl-bootstrap-silent-peer on snapshots built by hand: the root waiting for the magic of a
// connection no rank holds is named with the holder and the ranks behind it; the root between
// connections, or reading a rank that has not yet sent its 8 bytes, is not a hang.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "explain/rule_helpers.hpp"
#include "explain/snapshot_builders_test.hpp"
#include "hangbench/wait_graph.hpp"

using namespace hangbench::diagnose;
using namespace hangbench::diagnose::snapshot_builders;
namespace hp = hangbench::proc;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

namespace {

// A process of the job (rank >= 0, main thread asleep) or outside it (main thread in pause).
ProcessSnapshot job_process(int pid, const std::string& comm, int rank) {
  ProcessSnapshot p = process(pid, 1, comm, rank, rank >= 0 ? 2 : 0);
  p.threads.push_back(thread(pid, "t" + std::to_string(pid), rank >= 0 ? "clock_nanosleep" : "pause"));
  return p;
}

// Rank 0 (pid 100) made the id: its root thread 101 accepted a connection from pid 200 on
// the root's listening address and waits in socketFinalizeAccept; rank 1 (pid 300) waits
// in ncclCommInitRank.
Snapshot root_held_by(int holder_rank, bool finalizing = true, bool holder_read_first = false) {
  Snapshot s;
  auto rank0 = job_process(100, "train", 0);
  rank0.threads.push_back(thread(101, "t101", "recvfrom"));
  stack(rank0, 100, {"clock_nanosleep", "main"});
  if (finalizing) {
    stack(rank0, 101,
          {"recv", "socketProgressOpt", "socketFinalizeAccept", "ncclSocketAccept(ncclSocket*, ncclSocket*)",
           "bootstrapRoot", "start_thread"});
  } else {
    stack(rank0, 101, {"accept", "socketTryAccept", "ncclSocketAccept(ncclSocket*, ncclSocket*)", "bootstrapRoot"});
  }
  rank0.descriptors = {socket_fd(3, 10), socket_fd(6, 11)};
  auto holder = job_process(200, holder_rank >= 0 ? "train" : "scanner", holder_rank);
  holder.descriptors = {socket_fd(3, 12)};
  auto rank1 = job_process(300, "train", 1);
  stack(rank1, 300, {"poll", "bootstrapInit", "ncclCommInitRankFunc", "ncclCommInitRank"});
  s.processes = {rank0, holder, rank1};
  Connection listen;
  listen.end_a = {"tcp", "10.0.0.1:5000", "0.0.0.0:0", "LISTEN", 10, ""};
  listen.holders_a = {{100, 3, -1}};
  Connection accepted;
  accepted.end_a = {"tcp", "10.0.0.1:5000", "10.0.0.1:6000", "ESTABLISHED", 11, ""};
  accepted.end_b = hp::SocketEntry{"tcp", "10.0.0.1:6000", "10.0.0.1:5000", "ESTABLISHED", 12, ""};
  accepted.holders_a = {{100, 6, -1}};
  accepted.holders_b = {{200, 3, -1}};
  if (holder_read_first) {  // end_a is the end of the target read first: here the holder's
    std::swap(accepted.end_a, *accepted.end_b);
    std::swap(accepted.holders_a, accepted.holders_b);
  }
  s.connections = {listen, accepted};
  return s;
}

TEST(NcclBootstrapSilentPeer, NamesTheRootTheHolderThatIsNoRankAndTheRanksBehindIt) {
  const auto found = rules::nccl_bootstrap_silent_peer(root_held_by(-1));
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found.front();
  EXPECT_EQ(f.rule, "nccl-bootstrap-silent-peer");
  EXPECT_EQ(f.severity, Severity::Hang);
  EXPECT_THAT(f.pids, ElementsAre(100, 200));  // the waiting root, then its holder; rank 1 in ranks
  EXPECT_THAT(f.tids, ElementsAre(101));
  EXPECT_THAT(f.ranks, ElementsAre(1));
  EXPECT_THAT(f.summary, HasSubstr("pid 200 (scanner), no rank of the job"));
  EXPECT_THAT(f.summary, HasSubstr("rank 1 (pid 300) waits in ncclCommInitRank"));
}

TEST(NcclBootstrapSilentPeer, TheAcceptedEndIsFoundWhicheverEndTheSnapshotListsFirst) {
  const auto found = rules::nccl_bootstrap_silent_peer(root_held_by(-1, true, /*holder_read_first=*/true));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found.front().pids, ElementsAre(100, 200));
  EXPECT_THAT(found.front().facts.front(), HasSubstr("10.0.0.1:5000 <- 10.0.0.1:6000"));
}

TEST(NcclBootstrapSilentPeer, AnInlinedFinalizeIsReadFromTheRecvUnderNcclSocketAccept) {
  auto s = root_held_by(-1);
  s.processes[0].stacks.threads[1].functions = {"recv", "ncclSocketAccept(ncclSocket*, ncclSocket*)", "bootstrapRoot"};
  EXPECT_EQ(rules::nccl_bootstrap_silent_peer(s).size(), 1u);
  s.processes[0].stacks.threads[1].functions = {"accept", "ncclSocketAccept(ncclSocket*, ncclSocket*)",
                                                "bootstrapRoot"};
  EXPECT_TRUE(rules::nccl_bootstrap_silent_peer(s).empty()) << "in accept(): no connection read yet";
}

// NVIDIA's 2.32 wheels, read over every wheel without a GPU: after 8 bytes that are not the
// job's magic, the root reads a hello from the connection (cu13 2.32.6's frames, inlined
// finalize included) and waits on it as on a silent one.
TEST(NcclBootstrapSilentPeer, ARootReadingAHelloFromAConnectionNoRankHoldsIsNamedWithTheHello) {
  auto s = root_held_by(-1);
  s.processes[0].stacks.threads[1].functions = {
      "recv",
      "ncclOsSocketProgressOpt(int, ncclSocket*, void*, int, int*, int, int*)",
      "ncclCryptAcceptHello(ncclSocket*, ncclCryptHelloVerdict*)",
      "socketProgressState(ncclSocket*)",
      "ncclSocketAccept(ncclSocket*, ncclSocket*, bool)",
      "bootstrapRoot",
      "start_thread"};
  const auto found = rules::nccl_bootstrap_silent_peer(s);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found.front().pids, ElementsAre(100, 200));
  EXPECT_THAT(found.front().summary, HasSubstr("reads a hello from it (ncclCryptAcceptHello)"));
  EXPECT_THAT(found.front().summary, Not(HasSubstr("8-byte magic")));
}

TEST(NcclBootstrapSilentPeer, ARankThatHasNotYetSentItsMagicIsAHandshakeInProgress) {
  EXPECT_TRUE(rules::nccl_bootstrap_silent_peer(root_held_by(1)).empty());
}

TEST(NcclBootstrapSilentPeer, ARootBetweenConnectionsWaitsForItsRanks) {
  EXPECT_TRUE(rules::nccl_bootstrap_silent_peer(root_held_by(-1, /*finalizing=*/false)).empty());
}

TEST(NcclBootstrapSilentPeer, TheGraphHasTheRootWaitOnTheConnectionsHolder) {
  const auto s = root_held_by(-1);
  const auto g = build_wait_graph(s);
  int root = -1, holder = -1, socket = -1;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    if (n.kind == NodeKind::Thread && n.tid == 101) root = static_cast<int>(i);
    if (n.kind == NodeKind::Process && n.pid == 200) holder = static_cast<int>(i);
  }
  for (const auto& e : g.edges)
    if (e.from == root) socket = e.to;
  ASSERT_GE(socket, 0) << "the root thread waits on nothing";
  EXPECT_EQ(g.nodes[socket].kind, NodeKind::Socket);
  bool to_holder = false;
  for (const auto& e : g.edges)
    if (e.from == socket && e.to == holder) to_holder = true;
  EXPECT_TRUE(to_holder) << "the connection's other end is pid 200's";
}

}  // namespace
