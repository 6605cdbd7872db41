// The rule table fed synthetic snapshots: each known hang shape fires with its
// facts, and ordinary states do not.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "graph/thread_wait.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/render.hpp"

using namespace hangbench::diagnose;
namespace hp = hangbench::proc;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(HB_FIXTURES_DIR) + "/evidence/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

hp::ThreadInfo thread(int tid, std::string name, std::string syscall, std::string wchan = "") {
  hp::ThreadInfo t;
  t.tid = tid;
  t.name = std::move(name);
  t.state = 'S';
  t.wchan = std::move(wchan);
  if (!syscall.empty()) {
    t.syscall.kind = hp::SyscallLine::Kind::InSyscall;
    t.syscall_name = syscall;
  }
  return t;
}

hp::Descriptor socket_fd(int fd, std::uint64_t inode) {
  return {fd, "socket:[" + std::to_string(inode) + "]", {hp::DescriptorKind::Socket, inode}, -1};
}

hp::Descriptor pipe_fd(int fd, std::uint64_t inode, int flags) {
  return {fd, "pipe:[" + std::to_string(inode) + "]", {hp::DescriptorKind::Pipe, inode}, flags};
}

ProcessSnapshot process(int pid, int ppid, std::string comm, bool target, double start = 1000) {
  ProcessSnapshot p;
  p.info.pid = pid;
  p.info.ppid = ppid;
  p.info.comm = std::move(comm);
  p.info.state = 'S';
  p.info.start_unix = start;
  p.target = target;
  return p;
}

hp::SocketEntry tcp(std::string local, std::string remote, std::uint64_t inode) {
  return {"tcp", std::move(local), std::move(remote), "ESTABLISHED", inode, ""};
}

// pid 880 polls the accepted end (fd 57) of its self-connection; the client end
// (and a copy of the listener) is held only by its forked child 894.
Snapshot aliased_teardown(bool nccl_names, bool stacks) {
  Snapshot s;
  s.target_pids = {880};
  auto rank = process(880, 1, "python3", true, 1000);
  rank.threads = {thread(880, "python3", "futex", "futex_do_wait"),
                  thread(896, nccl_names ? "NCCL Service 0" : "worker", "poll", "poll_schedule_timeout.constprop.0")};
  rank.threads[1].polled_fds = {3, 57};
  rank.descriptors = {socket_fd(3, 51001), socket_fd(57, 51003)};
  rank.libraries = {"/opt/nccl/2.17.1/lib/libnccl.so.2.17.1"};
  if (stacks) {
    rank.stacks.attempted = true;
    rank.stacks.threads = parse_gdb_backtraces(fixture("gdb_nccl_abort.txt"));
  }
  auto child = process(894, 880, "python3", true, 1002.5);
  child.threads = {thread(894, "python3", "clock_nanosleep")};
  child.descriptors = {socket_fd(3, 51001), socket_fd(56, 51002)};
  s.processes = {rank, child};
  Connection c;
  c.end_a = tcp("127.0.0.1:45678", "127.0.0.1:38412", 51003);
  c.end_b = tcp("127.0.0.1:38412", "127.0.0.1:45678", 51002);
  c.holders_a = {{880, 57, -1}};
  c.holders_b = {{894, 56, -1}};
  s.connections = {c};
  return s;
}

const Finding* find_rule(const std::vector<Finding>& fs, const std::string& rule) {
  for (const auto& f : fs)
    if (f.rule == rule) return &f;
  return nullptr;
}
// A pointer into a temporary list would dangle (seen in CI as bad_alloc): ask has_rule instead.
const Finding* find_rule(std::vector<Finding>&& fs, const std::string& rule) = delete;

bool has_rule(const std::vector<Finding>& fs, const std::string& rule) {
  return std::any_of(fs.begin(), fs.end(), [&](const Finding& f) { return f.rule == rule; });
}

}  // namespace

TEST(EvidenceGdbParse, ThreadsAndFunctionNames) {
  auto threads = parse_gdb_backtraces(fixture("gdb_nccl_abort.txt"));
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].tid, 896);
  EXPECT_EQ(threads[0].name, "NCCL Service 0");
  ASSERT_GE(threads[0].functions.size(), 2u);
  EXPECT_EQ(threads[0].functions[0], "__GI___poll");
  EXPECT_EQ(threads[0].functions[1], "ncclProxyService");
  EXPECT_EQ(threads[1].tid, 880);
  EXPECT_THAT(threads[1].functions, ::testing::Contains("commFree"));
  EXPECT_THAT(threads[1].functions, ::testing::Contains("ncclCommAbort"));
  EXPECT_THAT(threads[1].functions, ::testing::Contains("__pthread_clockjoin_ex"));
  EXPECT_THAT(threads[1].functions, ::testing::Contains("__futex_abstimed_wait_common"));  // inlined frame, no address
  EXPECT_THAT(threads[1].functions, ::testing::Contains("std::basic_ostream<char, std::char_traits<char> >& "
                                                        "std::operator<< <std::char_traits<char> >"));
  EXPECT_EQ(threads[1].functions.back(), "main");
}

// mpirun polls its control connection to a rank it started; the rank made its end
// after exec. That is not a duplicate (it fired as one on the first PP run).
TEST(EvidenceRules, LauncherControlConnectionIsNotAnAlias) {
  Snapshot s;
  s.target_pids = {100, 120};
  auto launcher = process(100, 1, "mpirun", true, 1000);
  launcher.threads = {thread(100, "mpirun", "poll", "poll_schedule_timeout.constprop.0")};
  launcher.threads[0].polled_fds = {14};
  launcher.descriptors = {socket_fd(14, 7001)};
  auto rank = process(120, 100, "pp_pipeline", true, 1000.5);
  rank.threads = {thread(120, "pp_pipeline", "futex", "futex_do_wait")};
  rank.descriptors = {socket_fd(14, 7002)};
  s.processes = {launcher, rank};
  Connection c;
  c.end_a = tcp("127.0.0.1:56819", "127.0.0.1:56380", 7001);
  c.end_b = tcp("127.0.0.1:56380", "127.0.0.1:56819", 7002);
  c.holders_a = {{100, 14, -1}};
  c.holders_b = {{120, 14, -1}};
  s.connections = {c};
  auto findings = find_hang_shapes(s);
  EXPECT_EQ(find_rule(findings, "nccl-descriptor-alias"), nullptr);
  // The rank polling its end of the same connection (the H200 PP run's false positive).
  Snapshot reverse = s;
  reverse.processes[0].threads = {thread(100, "mpirun", "futex", "futex_do_wait")};
  reverse.processes[1].threads = {thread(120, "pp_pipeline", "poll", "poll_schedule_timeout.constprop.0")};
  reverse.processes[1].threads[0].polled_fds = {14};
  // Both hold the stdout pipe mpirun set up: a shared descriptor, which alone made it look like an alias.
  reverse.processes[0].descriptors.push_back(pipe_fd(20, 9000, O_RDONLY));
  reverse.processes[1].descriptors.push_back(pipe_fd(1, 9000, O_WRONLY));
  EXPECT_FALSE(has_rule(find_hang_shapes(reverse), "nccl-descriptor-alias"));
  // The same picture with a forked copy of the poller (same program) still fires.
  s.processes[0].info.comm = "python3";
  s.processes[1].info.comm = "python3";
  EXPECT_TRUE(has_rule(find_hang_shapes(s), "nccl-descriptor-alias"));
}

// What cuda-gdb printed on the H200 with only libnccl's and libc's symbols: NCCL
// 2.17.1 leaves its threads unnamed and the join itself is "??".
TEST(EvidenceRules, UnnamedThreadsWithNcclFramesAreTheNcclHang) {
  Snapshot s = aliased_teardown(/*nccl_names=*/false, /*stacks=*/false);
  auto& rank = s.processes[0];
  rank.stacks.attempted = true;
  rank.stacks.threads = {
      {880, "python3", {"??", "??", "commFree", "commCleanup", "commReclaim", "ncclCommAbort", "??"}},
      {896, "python3", {"poll", "ncclProxyService", "??"}}};
  auto findings = find_hang_shapes(s);
  const auto* f = find_rule(findings, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "NCCL descriptor-alias teardown hang");
  EXPECT_THAT(f->summary, HasSubstr("under commFree/ncclCommAbort"));
}

// Stored evidence can be judged again: the JSON form reads back to the same snapshot.
TEST(EvidenceSnapshotJson, RoundTripKeepsWhatTheRulesRead) {
  Snapshot s = aliased_teardown(/*nccl_names=*/true, /*stacks=*/true);
  s.processes[0].descriptors.push_back(pipe_fd(9, 777, O_WRONLY));
  s.pipes = {{777, {{894, 8, -1}}, {{880, 9, -1}}}};
  s.processes[0].threads[1].syscall.number = 7;
  s.processes[0].threads[1].syscall.args = {3, 2, 4294967295};
  s.processes[0].environment = {{"CUDA_LAUNCH_BLOCKING", "1"}};
  s.ancestor_parents = {{70, 1}, {75, 70}};
  nlohmann::json once = to_json(s);
  Snapshot back = snapshot_from_json(once);
  EXPECT_EQ(to_json(back), once);
  auto before = find_hang_shapes(s);
  auto after = find_hang_shapes(back);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].rule, before[i].rule);
    EXPECT_EQ(after[i].summary, before[i].summary);
  }
}

// "A descendant of" is told from the parents recorded at capture, never from this machine's
// /proc: a stored snapshot's pids belong to another moment (pid 50 here is whatever runs now).
TEST(EvidenceSnapshotJson, DescendantsAreToldFromTheRecordedAncestry) {
  Snapshot s;
  s.processes = {process(10, 1, "launcher", true), process(300, 50, "worker", false)};
  EXPECT_THAT(describe_process(s, 300, 10), HasSubstr("child of pid 50, started at"));
  s.ancestor_parents = {{50, 10}};
  EXPECT_THAT(describe_process(s, 300, 10), HasSubstr("a descendant of pid 10 (parent pid 50)"));
  EXPECT_THAT(describe_process(snapshot_from_json(to_json(s)), 300, 10), HasSubstr("a descendant of pid 10"));
}

TEST(EvidenceSnapshotJson, NotASnapshotSaysWhy) {
  EXPECT_THROW(snapshot_from_json(nlohmann::json{{"cells", 3}}), std::invalid_argument);
  EXPECT_THROW(snapshot_from_json(nlohmann::json::parse(R"({"processes":[{"pid":"x"}]})")), std::invalid_argument);
}

TEST(EvidenceDebuggerCommand, AllSymbolsByDefault) {
  EXPECT_EQ(debugger_command("gdb", 42, {}),
            (std::vector<std::string>{"gdb", "-nx", "-batch", "-p", "42", "-ex", "set pagination off", "-ex",
                                      "thread apply all bt"}));
}

TEST(EvidenceDebuggerCommand, ChosenLibrariesOnlyLoadNothingElse) {
  auto argv = debugger_command("cuda-gdb", 7, {"libnccl", "libc.so"});
  EXPECT_EQ(argv, (std::vector<std::string>{"cuda-gdb", "-nx", "-batch", "-iex", "set auto-solib-add off", "-p", "7",
                                            "-ex", "set pagination off", "-ex", "sharedlibrary libnccl", "-ex",
                                            "sharedlibrary libc.so", "-ex", "thread apply all bt"}));
}

TEST(EvidenceRules, NcclTeardownHangWithStacksNamesTheChildHolder) {
  auto findings = find_hang_shapes(aliased_teardown(true, true));
  const auto* f = find_rule(findings, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "NCCL descriptor-alias teardown hang");
  EXPECT_EQ(f->severity, Severity::Hang);
  EXPECT_THAT(f->summary, HasSubstr("pthread_join under commFree"));
  EXPECT_THAT(f->summary, HasSubstr("pid 894 (python3), a child that pid 880 forked at"));
  EXPECT_THAT(f->summary, HasSubstr("2.5 s after pid 880 started"));
  EXPECT_THAT(f->summary, HasSubstr("127.0.0.1:45678 <-> 127.0.0.1:38412"));
  EXPECT_THAT(::testing::PrintToString(f->facts), HasSubstr("libnccl.so.2.17.1"));
  EXPECT_THAT(f->pids, ::testing::ElementsAre(880, 894));
  bool listener_dup = false;
  for (const auto& fact : f->facts) listener_dup |= fact.find("its fd 3 = pid 880's fd 3") != std::string::npos;
  EXPECT_TRUE(listener_dup) << "the shared listener should be named as a duplicate";
}

TEST(EvidenceRules, NcclTeardownHangWithoutStacksFromThreadNames) {
  auto findings = find_hang_shapes(aliased_teardown(true, false));
  const auto* f = find_rule(findings, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "NCCL descriptor-alias teardown hang");
  EXPECT_THAT(f->summary, HasSubstr("Thread 880 waits in futex"));
}

TEST(EvidenceRules, SocketLevelReproductionIsTheDescriptorAliasShape) {
  auto findings = find_hang_shapes(aliased_teardown(false, false));
  const auto* f = find_rule(findings, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "descriptor-alias teardown shape");
  EXPECT_THAT(f->summary, HasSubstr("descriptor-alias teardown shape"));
  EXPECT_THAT(f->summary, HasSubstr("held only by pid 894"));
  EXPECT_EQ(summary_paragraph(aliased_teardown(false, false), findings), f->summary);
}

TEST(EvidenceRules, AnOrdinaryPeerProcessIsNotAnAlias) {
  auto s = aliased_teardown(false, false);
  s.processes[1] = process(999, 1, "client", false);
  s.processes[1].descriptors = {socket_fd(7, 51002)};
  s.connections[0].holders_b = {{999, 7, -1}};
  auto findings = find_hang_shapes(s);
  EXPECT_EQ(find_rule(findings, "nccl-descriptor-alias"), nullptr);
}

// Ranks on one GPU joined by NET/Socket: the peer rank still holds its own end and
// its forked loader workers inherited copies of it. Nothing was closed: no alias
// (the 2.18.1 watchdog hang on the H200 was called "descriptor-alias" this way).
TEST(EvidenceRules, APeerRankAndTheWorkersThatInheritedItsEndAreNotAnAlias) {
  auto s = aliased_teardown(false, false);
  s.processes[1] = process(999, 1, "ddp_abort", true);
  s.processes[1].descriptors = {socket_fd(7, 51002)};
  auto worker_a = process(1001, 999, "ddp_abort", true, 1003);
  worker_a.descriptors = {socket_fd(7, 51002)};
  auto worker_b = process(1002, 999, "ddp_abort", true, 1003);
  worker_b.descriptors = {socket_fd(7, 51002)};
  s.processes.push_back(worker_a);
  s.processes.push_back(worker_b);
  s.connections[0].holders_b = {{999, 7, -1}, {1001, 7, -1}, {1002, 7, -1}};
  EXPECT_FALSE(has_rule(find_hang_shapes(s), "nccl-descriptor-alias"));
  // The same copies after the peer itself closed its end: they pin it (the cross-process alias).
  s.processes[1].descriptors.clear();
  s.connections[0].holders_b = {{1001, 7, -1}, {1002, 7, -1}};
  EXPECT_TRUE(has_rule(find_hang_shapes(s), "nccl-descriptor-alias"));
}

// The watchdog abort at world 2 on the H200 (2.18.1): the aborting thread waits in
// cuStreamSynchronize under libnccl; the same wait outside NCCL is not this finding.
TEST(EvidenceRules, NcclWaitingInAStreamSynchronisationIsNamed) {
  auto s = aliased_teardown(false, false);
  StackThread t;
  t.tid = 11079;
  t.name = "ddp_abort";
  auto frame = [](std::string function, std::string module) {
    StackFrame f;
    f.function = std::move(function);
    f.module = std::move(module);
    return f;
  };
  t.frames = {frame("??", "libcuda.so.580.159.04"), frame("cuStreamSynchronize", "libcuda.so.580.159.04"),
              frame("??", "/opt/nccl/2.18.1/lib/libnccl.so.2"), frame("??", "/opt/nccl/2.18.1/lib/libnccl.so.2")};
  for (const auto& f : t.frames) t.functions.push_back(f.function);
  s.processes[0].stacks.attempted = true;
  s.processes[0].stacks.threads = {t};
  const auto findings = find_hang_shapes(s);
  const auto* f = find_rule(findings, "nccl-waits-for-gpu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Hang);
  EXPECT_THAT(f->summary, HasSubstr("Thread 11079 \"ddp_abort\" of pid 880"));
  EXPECT_THAT(f->summary, HasSubstr("waits in cuStreamSynchronize called from libnccl"));
  EXPECT_THAT(::testing::PrintToString(f->facts), HasSubstr("cuStreamSynchronize (libcuda.so.580.159.04) <- ??"));
  // A program's own synchronisation (no libnccl frame further out) is something else.
  s.processes[0].stacks.threads[0].frames.resize(2);
  s.processes[0].stacks.threads[0].functions.resize(2);
  EXPECT_FALSE(has_rule(find_hang_shapes(s), "nccl-waits-for-gpu"));
}

// The H200's evidence of NVIDIA/nccl issue 750 (nccl_launch_blocking over the 2.16.5
// wheel, both ranks hung in their first all-reduce, diagnose --stacks, 2026-12-04):
// each rank's main thread is inside cuLaunchKernelEx under ncclLaunchKernel and its
// proxy waits for posted work. Rank 1 (spawned by rank 0) holds its own ends of
// their NET/Socket connections: a rank running NCCL's threads is a peer, not an alias.
TEST(EvidenceRules, LaunchBlockingOnTheH200IsNamedAndNotAnAlias) {
  Snapshot s = snapshot_from_json(nlohmann::json::parse(fixture("launch_blocking_2.16.5.json")));
  auto findings = find_hang_shapes(s);
  EXPECT_EQ(find_rule(findings, "nccl-descriptor-alias"), nullptr);
  std::vector<int> pids;
  for (const auto& f : findings) {
    if (f.rule != "nccl-launch-blocking") continue;
    pids.push_back(f.pids.front());
    EXPECT_EQ(f.severity, Severity::Hang);
    EXPECT_EQ(f.catalog, "nccl-launch-blocking-proxy");
    EXPECT_THAT(f.summary, HasSubstr("inside cuLaunchKernelEx called from ncclLaunchKernel"));
    const std::string facts = ::testing::PrintToString(f.facts);
    EXPECT_THAT(facts, HasSubstr("cuLaunchKernelEx <- __cudart929 <- cudaLaunchKernelExC <- ncclLaunchKernel"));
    EXPECT_THAT(facts, HasSubstr("waits in ncclProxyGetPostedOps"));
    EXPECT_THAT(facts, HasSubstr("CUDA_LAUNCH_BLOCKING is not in its starting environment"));
  }
  EXPECT_EQ(pids, (std::vector<int>{14016, 14030}));
  // Snapshots now record the variable (the stored evidence predates that): rank 1 inherited it.
  s.processes[1].environment = {{"CUDA_LAUNCH_BLOCKING", "1"}};
  const auto again = find_hang_shapes(s);
  const Finding* rank1 = nullptr;
  for (const auto& f : again)
    if (f.rule == "nccl-launch-blocking" && f.pids.front() == 14030) rank1 = &f;
  ASSERT_NE(rank1, nullptr);
  EXPECT_THAT(::testing::PrintToString(rank1->facts), HasSubstr("CUDA_LAUNCH_BLOCKING=1 is in its environment"));
  // An ordinary launch of the program's own kernel (no ncclLaunchKernel further out) is nothing.
  for (auto& p : s.processes)
    for (auto& t : p.stacks.threads)
      for (auto& f : t.frames)
        if (f.function.find("ncclLaunchKernel") != std::string::npos) f.function = "launch_my_kernel";
  EXPECT_FALSE(has_rule(find_hang_shapes(s), "nccl-launch-blocking"));
  // Without stacks (diagnose's default) rank 1's own CUDA driver threads still say it
  // is a rank, not a forked copy: no alias. Only --stacks can name the launch.
  for (auto& p : s.processes) p.stacks = {};
  const auto without_stacks = find_hang_shapes(s);
  EXPECT_EQ(find_rule(without_stacks, "nccl-descriptor-alias"), nullptr);
  EXPECT_EQ(find_rule(without_stacks, "nccl-launch-blocking"), nullptr);
  const std::string summary = summary_paragraph(s, without_stacks);
  EXPECT_THAT(summary, HasSubstr("No hang found without stacks (`hangbench diagnose --stacks`"));
  // The healthy connections between the ranks are not the summary's business (HOLDERS lists them).
  EXPECT_THAT(summary, Not(HasSubstr("held open by")));
}

TEST(EvidenceRules, NoPollingThreadNoTeardownFinding) {
  auto s = aliased_teardown(false, false);
  s.processes[0].threads[1] = thread(896, "worker", "nanosleep");
  EXPECT_FALSE(has_rule(find_hang_shapes(s), "nccl-descriptor-alias"));
}

TEST(EvidenceRules, SelfConnectionWithADuplicatedEndIsARisk) {
  auto s = aliased_teardown(false, false);
  s.processes[0].descriptors.push_back(socket_fd(58, 51002));
  s.connections[0].holders_b = {{880, 58, -1}, {894, 56, -1}};
  auto findings = find_hang_shapes(s);
  EXPECT_EQ(find_rule(findings, "nccl-descriptor-alias"), nullptr);
  const auto* f = find_rule(findings, "self-connection-aliased");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Risk);
  EXPECT_THAT(f->summary, HasSubstr("pid 894"));
}

TEST(EvidenceRules, HolderSentenceSaysWhoHoldsEachEnd) {
  auto sentences = holder_sentences(aliased_teardown(false, false));
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_THAT(sentences[0],
              HasSubstr("the ESTABLISHED connection 127.0.0.1:45678 <-> 127.0.0.1:38412 is held open by"));
  EXPECT_THAT(sentences[0], HasSubstr("pid 894 (python3), a child that pid 880 forked at"));
}

TEST(EvidenceRules, MpiGilShapeWithoutStacks) {
  Snapshot s;
  s.target_pids = {500};
  auto p = process(500, 1, "python3", true);
  p.libraries = {"/usr/lib/x86_64-linux-gnu/libmpi.so.40"};
  p.threads = {thread(500, "python3", "futex", "futex_wait_queue"), thread(501, "progress", "poll")};
  s.processes = {p};
  auto findings = find_hang_shapes(s);
  const auto* f = find_rule(findings, "mpi-gil");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "MPI progress / GIL shape");
  EXPECT_THAT(f->summary, HasSubstr("--stacks"));
  EXPECT_EQ(f->catalog, "mpi-progress-gil");  // its entry in catalog/
}

TEST(EvidenceRules, MpiGilWithStacksNamesTheLikelyHolder) {
  Snapshot s;
  auto p = process(500, 1, "python3", true);
  p.libraries = {"/usr/lib/libpython3.11.so.1.0", "/usr/lib/libmpi.so.40"};
  p.threads = {thread(500, "python3", "futex"), thread(501, "python3", "poll")};
  p.stacks.attempted = true;
  p.stacks.threads = {{500, "python3", {"__futex_abstimed_wait_common", "take_gil", "PyEval_RestoreThread"}},
                      {501, "python3", {"poll", "ompi_request_default_wait", "PMPI_Wait", "_PyEval_EvalFrameDefault"}}};
  s.processes = {p};
  auto findings = find_hang_shapes(s);  // kept alive: find_rule points into it
  const auto* f = find_rule(findings, "mpi-gil");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Hang);
  EXPECT_THAT(f->summary, HasSubstr("thread 501"));
  EXPECT_THAT(f->summary, HasSubstr("likely holds it"));
}

TEST(EvidenceRules, PythonWithoutMpiIsNotTheMpiShape) {
  Snapshot s;
  auto p = process(500, 1, "python3", true);
  p.threads = {thread(500, "python3", "futex"), thread(501, "python3", "poll")};
  s.processes = {p};
  EXPECT_FALSE(has_rule(find_hang_shapes(s), "mpi-gil"));
}

TEST(EvidenceRules, StoppedProcessAndUnreapedZombie) {
  Snapshot s;
  auto stopped = process(700, 1, "trainer", true);
  stopped.info.state = 'T';
  auto zombie = process(701, 700, "worker", true);
  zombie.info.state = 'Z';
  s.processes = {stopped, zombie};
  auto findings = find_hang_shapes(s);
  const auto* st = find_rule(findings, "stopped");
  ASSERT_NE(st, nullptr);
  EXPECT_THAT(st->summary, HasSubstr("kill -CONT 700"));
  const auto* z = find_rule(findings, "zombie");
  ASSERT_NE(z, nullptr);
  EXPECT_THAT(z->summary, HasSubstr("pid 700 (trainer)"));
}

TEST(EvidenceRules, PipeReaderBlockedNamesTheWriteEndHolder) {
  Snapshot s;
  auto reader = process(800, 1, "reader", true);
  auto t = thread(800, "reader", "read", "pipe_read");
  t.syscall.args = {4, 0, 4096};
  reader.threads = {t};
  reader.descriptors = {pipe_fd(4, 77, O_RDONLY)};
  auto grandchild = process(802, 801, "daemon", false);
  grandchild.threads = {thread(802, "daemon", "pause", "")};  // idle for good: it never writes nor exits
  grandchild.descriptors = {pipe_fd(9, 77, O_WRONLY)};
  s.processes = {reader, grandchild};
  s.pipes = {{77, {{800, 4, O_RDONLY}}, {{802, 9, O_WRONLY}}}};
  auto findings = find_hang_shapes(s);  // kept alive: find_rule points into it
  const auto* f = find_rule(findings, "pipe-writer-held");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->summary, HasSubstr("pid 802 (daemon)"));
  EXPECT_THAT(f->summary, HasSubstr("fd 4"));
  // The same reader while the writer works (a worker waiting for its next task) is no hang.
  s.processes[1].threads = {thread(802, "daemon", "", "")};
  s.processes[1].threads[0].state = 'R';
  EXPECT_FALSE(has_rule(find_hang_shapes(s), "pipe-writer-held"));
}

TEST(EvidenceRules, NothingMatchedSaysSo) {
  Snapshot s;
  auto p = process(900, 1, "idle", true);
  p.threads = {thread(900, "idle", "clock_nanosleep")};
  s.processes = {p};
  auto findings = find_hang_shapes(s);
  EXPECT_TRUE(findings.empty());
  EXPECT_EQ(summary_paragraph(s, findings),
            "No hang found: every wait of the 1 program thread(s) read leads to something that can still move (0 "
            "running).");
  EXPECT_THAT(render_text(s, findings), HasSubstr("none: no thread is part of a hang pattern"));
  EXPECT_THAT(render_markdown(s, findings), HasSubstr("None: no thread is part of a hang pattern."));
}

// Two threads in futex without frames: which mutex and whose is not read, so no
// "no hang": the summary names them and says how to read more.
TEST(EvidenceRules, UnnamedWaitsAreNotCalledHealthy) {
  Snapshot s;
  auto p = process(910, 1, "abba", true);
  p.threads = {thread(910, "abba", "futex"), thread(911, "abba", "futex")};
  s.processes = {p};
  const auto findings = find_hang_shapes(s);
  EXPECT_TRUE(findings.empty());
  EXPECT_EQ(summary_paragraph(s, findings),
            "No hang found among the waits that could be named: 2 of 2 program thread(s) wait on something that "
            "cannot be named without their frames, assumed able to move: pid 910 thread 910 \"abba\" in futex; pid "
            "910 thread 911 \"abba\" in futex (`hangbench diagnose --stacks` reads them: a mutex and its owner, a "
            "GPU wait).");
}

TEST(EvidenceRules, JsonCarriesFindingsAndSchema) {
  auto s = aliased_teardown(true, true);
  auto j = diagnosis_json(s, find_hang_shapes(s));
  EXPECT_EQ(j["schema"], "hangbench.evidence/1");
  ASSERT_FALSE(j["findings"].empty());
  EXPECT_EQ(j["findings"][0]["rule"], "nccl-descriptor-alias");
  EXPECT_EQ(j["connections"][0]["holders_b"][0]["pid"], 894);
  EXPECT_EQ(j["processes"][0]["threads"][1]["syscall"]["name"], "poll");
}

// NCCL 2.23.4-2.25.1 after a peer died (catalog nccl-progress-abort-spin): the main
// thread joins, under ncclCommAbort, a progress thread that keeps running.
Snapshot abort_joining(char joined_state, std::int64_t switches_later, bool nccl_frames) {
  auto rank = process(500, 1, "nccl_peer_death", true);
  rank.libraries = {"/opt/nccl/lib/libnccl.so.2"};
  auto main_thread = thread(500, "nccl_peer_death", "futex", "futex_wait_queue");
  main_thread.syscall.args = {0x7f0000001000, 0, 502};
  main_thread.futex_word = 502;
  auto progress = thread(502, "nccl_peer_death", "");
  progress.state = joined_state;
  progress.switches = 10;
  progress.switches_later = switches_later;
  rank.threads = {main_thread, thread(501, "nccl_peer_death", "poll"), progress};
  rank.stacks.attempted = true;
  StackThread joiner;
  joiner.tid = 500;
  for (const char* fn :
       {"__futex_abstimed_wait_common", "pthread_join", nccl_frames ? "ncclProxyDestroy" : "my_pool_stop",
        nccl_frames ? "commReclaim" : "my_pool_shutdown", nccl_frames ? "ncclCommAbort" : "main"}) {
    StackFrame f;
    f.function = fn;
    joiner.frames.push_back(f);
    joiner.functions.push_back(fn);
  }
  StackThread spinner;
  spinner.tid = 502;
  for (const char* fn : {"sched_yield", "ncclProxyProgress", "start_thread"}) {
    StackFrame f;
    f.function = fn;
    spinner.frames.push_back(f);
    spinner.functions.push_back(fn);
  }
  rank.stacks.threads = {joiner, spinner};
  Snapshot s;
  s.target_pids = {500};
  s.processes = {rank};
  return s;
}

TEST(EvidenceRules, AbortJoiningASpinningProgressThreadIsTheProgressAbortHang) {
  const auto findings = find_hang_shapes(abort_joining('R', 4000, true));
  const Finding* f = find_rule(findings, "nccl-abort-joins-spinning-thread");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->catalog, "nccl-progress-abort-spin");
  EXPECT_EQ(f->severity, Severity::Hang);
  EXPECT_EQ(f->tids, (std::vector<int>{500, 502}));
  EXPECT_THAT(f->summary, HasSubstr("under ncclCommAbort"));
  EXPECT_THAT(::testing::PrintToString(f->facts), HasSubstr("ncclProxyProgress"));
  EXPECT_THAT(::testing::PrintToString(f->facts), HasSubstr("woke 3990 times"));
}

TEST(EvidenceRules, AJoinOfAThreadThatSleepsOrAJoinOutsideNcclIsNotTheProgressAbortHang) {
  // The joined thread asleep, not waking: an ordinary join (the graph's business).
  EXPECT_FALSE(has_rule(find_hang_shapes(abort_joining('S', 10, true)), "nccl-abort-joins-spinning-thread"));
  // The program's own pool joining its own busy worker, outside NCCL's teardown.
  EXPECT_FALSE(has_rule(find_hang_shapes(abort_joining('R', 4000, false)), "nccl-abort-joins-spinning-thread"));
}

// A live diagnosis on an H100 (2026-12-06, NVIDIA's 2.25.1 wheel, nccl_peer_death with
// its peer killed, results/h100-2026-12-06-catalog-sweep-diagnose): ncclCommAbort's own
// thread polls in asyncJobLaunch, its async job joins the proxy service thread, and that
// thread, in ncclProxyProgressDestroy, joins the progress thread, which spins. The join
// under ncclProxyProgressDestroy is the one named.
TEST(EvidenceRules, ProgressAbortSpinOnTheH100NamesTheServiceThreadJoiningTheSpinningOne) {
  Snapshot s = snapshot_from_json(nlohmann::json::parse(fixture("progress_abort_spin_2.25.1_h100.json")));
  auto findings = find_hang_shapes(s);
  const Finding* f = find_rule(findings, "nccl-abort-joins-spinning-thread");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pids, (std::vector<int>{1255}));
  EXPECT_EQ(f->tids, (std::vector<int>{1280, 1288}));
  EXPECT_EQ(f->catalog, "nccl-progress-abort-spin");
}

// Live on an H100 (2026-12-07, NVIDIA's 2.22.3 wheel, nccl_first_collective
// --order=post-then-signal, results/h100-2026-12-07-catalog-diagnose): rank 0's
// all-reduce waits in ncclGroupEnd for its job thread, which connects the ring and
// needs rank 1 inside NCCL; rank 1 reads a pipe rank 0 writes after the all-reduce.
// Ubuntu 24.04's libc is stripped, so NCCL's own threads start in unnamed frames: they
// are still NCCL's, not the program's (they made the cycle look escapable).
TEST(EvidenceRules, FirstCollectiveConnectOnTheH100IsACycleThroughBothRanks) {
  Snapshot s = snapshot_from_json(nlohmann::json::parse(fixture("first_collective_2.22.3_h100.json")));
  auto findings = find_hang_shapes(s);
  const Finding* f = find_rule(findings, "nccl-connect-cycle");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Hang);
  std::vector<int> pids = f->pids, tids = f->tids;
  std::sort(pids.begin(), pids.end());
  std::sort(tids.begin(), tids.end());
  EXPECT_EQ(pids, (std::vector<int>{611, 613}));
  EXPECT_EQ(tids, (std::vector<int>{611, 613, 633}));
  EXPECT_EQ(f->catalog, "nccl-first-collective-connect");
  for (int proxy_thread : {629, 631, 634}) {
    const auto& p = *s.find(611);
    const auto t =
        std::find_if(p.threads.begin(), p.threads.end(), [&](const auto& x) { return x.tid == proxy_thread; });
    ASSERT_NE(t, p.threads.end());
    EXPECT_TRUE(is_runtime_thread(p, *t)) << "thread " << proxy_thread << " is NCCL's";
  }
}

// Live on an H100 (2026-12-07, 2.22.3, nccl_peer_death --comms=2 --abort-order=each):
// ncclCommAbort of the first communicator joins NCCL's thread, which is in cudaFreeHost
// while the second communicator's kernel waits for the killed rank. The same join as
// the progress spin; the free tells the multi-communicator abort apart.
TEST(EvidenceRules, MultiCommAbortOnTheH100IsTheFreeNotTheProgressSpin) {
  Snapshot s = snapshot_from_json(nlohmann::json::parse(fixture("multi_comm_abort_2.22.3_h100.json")));
  auto findings = find_hang_shapes(s);
  const Finding* f = find_rule(findings, "nccl-abort-joins-spinning-thread");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->pids, (std::vector<int>{665}));
  EXPECT_EQ(f->tids, (std::vector<int>{665, 681}));
  EXPECT_THAT(f->summary, HasSubstr("frees memory with cudaFreeHost"));
  EXPECT_THAT(f->facts, Contains("joined thread: a device-synchronising free"));
  EXPECT_EQ(f->catalog, "nccl-multi-comm-abort");
  // The 2.25.1 spin carries no such fact and stays the progress spin's.
  Snapshot spin = snapshot_from_json(nlohmann::json::parse(fixture("progress_abort_spin_2.25.1_h100.json")));
  const auto spin_findings = find_hang_shapes(spin);
  const Finding* g = find_rule(spin_findings, "nccl-abort-joins-spinning-thread");
  ASSERT_NE(g, nullptr);
  EXPECT_THAT(g->facts, Not(Contains("joined thread: a device-synchronising free")));
}

// Stored evidence judged again where its NCCL library is no file keeps the library's
// version from the JSON (the headline's range and remedies depend on it).
TEST(EvidenceSnapshotJson, TheNcclLibrarysFactsTravelWithTheEvidence) {
  nlohmann::json j = nlohmann::json::parse(fixture("progress_abort_spin_2.25.1_h100.json"));
  const std::string path = "/nowhere/on/this/machine/libnccl.so.2";
  j["nccl_libraries"] = {
      {{"path", path}, {"version", "2.25.1"}, {"calls_shutdown", "yes"}, {"sha256", "abc"}, {"sentence", "recorded"}}};
  Snapshot s = snapshot_from_json(j);
  EXPECT_EQ(describe_nccl_library(path).version, "2.25.1");
  EXPECT_EQ(describe_nccl_library(path).sentence, "recorded");
  EXPECT_EQ(describe_nccl_library("/nowhere/else/libnccl.so.2").version, "");
}
