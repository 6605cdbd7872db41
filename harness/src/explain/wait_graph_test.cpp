// The wait-for graph and its generic findings on snapshots built by hand: each
// shape names exactly the processes, threads and ranks involved, and healthy
// waits (a sleeper, a running peer, a collective every rank is in) name nothing.
#include "hangbench/wait_graph.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "explain/graph_findings.hpp"
#include "explain/snapshot_builders_test.hpp"
#include "hangbench/findings.hpp"

using namespace hangbench::diagnose;
using namespace hangbench::diagnose::snapshot_builders;
namespace hp = hangbench::proc;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

namespace {

std::vector<Finding> with_rule(const std::vector<Finding>& all, const std::string& rule) {
  std::vector<Finding> out;
  for (const auto& f : all)
    if (f.rule == rule) out.push_back(f);
  return out;
}

std::vector<Finding> findings(const Snapshot& s) { return graph_findings(s, build_wait_graph(s)); }

// Two threads of one process, each holding the mutex the other wants.
Snapshot mutex_deadlock() {
  Snapshot s;
  auto p = process(100, 1, "deadlock");
  auto main = thread(100, "deadlock", "futex", {0x1000, 128, 2});
  auto a = thread(101, "deadlock", "futex", {0x2000, 128, 2});
  auto b = thread(102, "deadlock", "futex", {0x3000, 128, 2});
  main.futex_word = 101;  // main joins thread 101
  a.futex_word = 2;
  a.futex_owner = 102;  // a wants the mutex b holds
  b.futex_word = 2;
  b.futex_owner = 101;
  p.threads = {main, a, b};
  stack(p, 100, {"__futex_abstimed_wait_common", "__pthread_clockjoin_ex", "main"});
  stack(p, 101, {"__lll_lock_wait", "___pthread_mutex_lock", "worker_a"});
  stack(p, 102, {"__lll_lock_wait", "___pthread_mutex_lock", "worker_b"});
  s.processes = {p};
  return s;
}

TEST(WaitGraph, TwoThreadsOnTwoMutexesAreOneCycleAndTheJoinerIsNotInIt) {
  auto s = mutex_deadlock();
  auto cycles = with_rule(findings(s), "wait-cycle");
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].pids, ElementsAre(100));
  EXPECT_THAT(cycles[0].tids, UnorderedElementsAre(101, 102));
  EXPECT_EQ(cycles[0].severity, Severity::Hang);
  EXPECT_THAT(cycles[0].summary, HasSubstr("pthread_mutex_lock"));
  auto g = build_wait_graph(s);
  EXPECT_TRUE(g.thread(100, 100)->stuck) << "the joiner waits for a stuck thread";
}

TEST(WaitGraph, AMutexOwnerThatRunsIsNoHang) {
  auto s = mutex_deadlock();
  s.processes[0].threads[2] = thread(102, "deadlock", "running");
  EXPECT_TRUE(findings(s).empty());
  EXPECT_FALSE(build_wait_graph(s).thread(100, 101)->stuck);
}

// Three processes, each reading the pipe that the next one would write.
Snapshot pipe_ring(char third_state) {
  Snapshot s;
  for (int i = 0; i < 3; ++i) {
    int pid = 200 + i;
    auto p = process(pid, 1, "ring");
    p.threads = {thread(pid, "ring", "read", {3})};
    p.descriptors = {pipe_fd(3, 900 + i), pipe_fd(4, 900 + (i + 1) % 3)};
    p.descriptors[1].flags = 1;  // O_WRONLY
    s.processes.push_back(p);
    s.pipes.push_back({static_cast<std::uint64_t>(900 + (i + 1) % 3), {}, {}});
  }
  for (auto& use : s.pipes) {
    int reader = 200 + static_cast<int>(use.inode - 900);
    int writer = 200 + (static_cast<int>(use.inode - 900) + 2) % 3;
    use.readers = {{reader, 3, 0}};
    use.writers = {{writer, 4, 1}};
  }
  s.processes[2].info.state = third_state;
  return s;
}

TEST(WaitGraph, ThreeProcessesInAPipeRingAreOneCycleNamingAllThree) {
  auto cycles = with_rule(findings(pipe_ring('S')), "wait-cycle");
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].pids, UnorderedElementsAre(200, 201, 202));
  EXPECT_THAT(cycles[0].tids, UnorderedElementsAre(200, 201, 202));
  EXPECT_THAT(cycles[0].summary, HasSubstr("pipe 90"));
}

TEST(WaitGraph, AWaitThatEndsAtAStoppedProcessNamesTheWaitersAndThatProcessLast) {
  auto s = pipe_ring('T');
  s.processes[2].threads[0].state = 'T';
  auto all = findings(s);
  EXPECT_TRUE(with_rule(all, "wait-cycle").empty());
  auto stopped = with_rule(all, "blocked-by-stopped");
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].pids.back(), 202);
  EXPECT_THAT(stopped[0].pids, UnorderedElementsAre(200, 201, 202));
}

TEST(WaitGraph, APythonThreadHoldingTheGilInABlockingReadIsAConvoy) {
  Snapshot s;
  auto p = process(300, 1, "python3");
  p.threads = {thread(300, "python3", "read", {5}), thread(301, "python3", "futex", {0x10, 137, 0})};
  p.descriptors = {pipe_fd(5, 950), pipe_fd(6, 950)};
  p.python.version = "3.12.3";
  p.python.gil_holder_tid = 300;
  p.python.threads = {{300, true, {}}, {301, false, {}}};
  stack(p, 301, {"pthread_cond_timedwait", "take_gil", "PyEval_RestoreThread", "time_sleep"});
  s.processes = {p};
  s.pipes = {{950, {{300, 5, 0}}, {{300, 6, 1}}}};  // only the holder's own process could write
  auto all = findings(s);
  auto convoy = with_rule(all, "gil-convoy");
  ASSERT_EQ(convoy.size(), 1u);
  EXPECT_THAT(convoy[0].tids, ElementsAre(300, 301));
  EXPECT_EQ(convoy[0].severity, Severity::Hang);
  EXPECT_THAT(convoy[0].summary, HasSubstr("holds the GIL"));
  // The holder waits for its own process, which can act only through the GIL's waiter: a ring.
  EXPECT_EQ(with_rule(all, "wait-cycle").size(), 1u);
}

Snapshot mpi_job(const std::vector<std::string>& calls) {
  Snapshot s;
  auto launcher = process(400, 1, "mpirun");
  launcher.threads = {thread(400, "mpirun", "poll", {})};
  s.processes.push_back(launcher);
  for (int r = 0; r < static_cast<int>(calls.size()); ++r) {
    int pid = 401 + r;
    auto p = process(pid, 400, "rank", r, static_cast<int>(calls.size()));
    if (calls[r] == "sleep") {
      p.threads = {thread(pid, "rank", "clock_nanosleep")};
      stack(p, pid, {"clock_nanosleep", "sleep", "main"});
    } else if (calls[r] == "exited") {
      continue;
    } else {
      p.threads = {thread(pid, "rank", "running")};
      stack(p, pid, {"opal_progress", "ompi_coll_base_barrier", "P" + calls[r], "main"});
    }
    s.processes.push_back(p);
  }
  return s;
}

TEST(WaitGraph, EveryRankInTheSameCollectiveIsProgressNotAHang) {
  EXPECT_TRUE(findings(mpi_job({"MPI_Allreduce", "MPI_Allreduce", "MPI_Allreduce"})).empty());
}

TEST(WaitGraph, ARankAsleepOutsideMpiIsTheMissingRank) {
  auto all = findings(mpi_job({"MPI_Barrier", "MPI_Barrier", "sleep"}));
  auto missing = with_rule(all, "missing-rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_THAT(missing[0].ranks, ElementsAre(2));
  EXPECT_THAT(missing[0].pids, UnorderedElementsAre(401, 402, 403));
  EXPECT_THAT(missing[0].summary, HasSubstr("rank 2 (pid 403) is alive but outside MPI"));
}

TEST(WaitGraph, ARankThatExitedIsMissingAndItsPeersAreStuck) {
  auto s = mpi_job({"MPI_Barrier", "MPI_Barrier", "exited"});
  auto missing = with_rule(findings(s), "missing-rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_THAT(missing[0].ranks, ElementsAre(2));
  EXPECT_THAT(missing[0].pids, UnorderedElementsAre(401, 402));
  EXPECT_THAT(missing[0].summary, HasSubstr("rank 2 of 3 has no live process"));
  EXPECT_TRUE(build_wait_graph(s).thread(401, 401)->stuck);
}

// A rank that started its peer itself (no launcher in the snapshot) and reaped it: only its
// sockets tell that the peer is gone. It polls in short sleeps for an error that never comes
// (NCCL 2.26.2 to 2.27.7 swallow a network error), so it moves, yet waits for the dead rank.
Snapshot rank_whose_peer_hung_up(const std::string& tcp_state, const std::string& main_call) {
  Snapshot s;
  auto p = process(500, 1, "nccl_peer_death", 0, 2);
  p.threads = {thread(500, "nccl_peer_death", main_call)};
  if (main_call == "clock_nanosleep") p.threads[0].sleep_left_s = 0.01;
  p.threads[0].switches = 100;
  p.threads[0].switches_later = 140;  // it woke many times while it was read
  stack(p, 500, {"clock_nanosleep", "usleep", "wait_for_error", "main"});
  p.descriptors = {socket_fd(40, 7001), socket_fd(41, 7002)};
  s.processes = {p};
  for (std::uint64_t inode : {7001, 7002}) {
    Connection c;
    c.end_a = {"tcp", "10.0.0.1:5000" + std::to_string(inode % 10), "10.0.0.2:6000", tcp_state, inode, ""};
    c.holders_a = {{500, static_cast<int>(inode - 6961), -1}};
    s.connections.push_back(c);
  }
  return s;
}

TEST(WaitGraph, ARankWhosePeerHungUpWaitsForItEvenWhilePolling) {
  auto missing = with_rule(findings(rank_whose_peer_hung_up("CLOSE_WAIT", "clock_nanosleep")), "missing-rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_THAT(missing[0].ranks, ElementsAre(1));
  EXPECT_THAT(missing[0].pids, ElementsAre(500));
  EXPECT_THAT(missing[0].summary, HasSubstr("Rank 0 (pid 500, polling) waits for the whole group"));
  EXPECT_THAT(missing[0].summary, HasSubstr("rank 1 of 2 has no live process"));
  EXPECT_THAT(missing[0].summary, HasSubstr("the far end of 2 TCP connections of rank 0 was closed"));
}

TEST(WaitGraph, OpenConnectionsOrARankAtWorkAreNoMissingRank) {
  // Its peer may be on another host: nothing says it is gone.
  EXPECT_TRUE(with_rule(findings(rank_whose_peer_hung_up("ESTABLISHED", "clock_nanosleep")), "missing-rank").empty());
  // It computes: a rank whose peer left first may be finishing its own work.
  EXPECT_TRUE(with_rule(findings(rank_whose_peer_hung_up("CLOSE_WAIT", "running")), "missing-rank").empty());
  // It joins a thread of its own (NCCL's abort joining a spinning progress thread): that is
  // what it waits for, not the peer.
  auto joining = rank_whose_peer_hung_up("CLOSE_WAIT", "futex");
  joining.processes[0].stacks.threads[0].functions = {
      "__futex_abstimed_wait_common", "pthread_join", "ncclProxyDestroy", "commFree", "ncclCommAbort", "main"};
  EXPECT_TRUE(with_rule(findings(joining), "missing-rank").empty());
  // One rank of eight read alone: a closed connection does not say which of the seven others
  // it was, nor that the others are gone.
  auto one_of_eight = rank_whose_peer_hung_up("CLOSE_WAIT", "clock_nanosleep");
  one_of_eight.processes[0].environment["WORLD_SIZE"] = "8";
  EXPECT_TRUE(with_rule(findings(one_of_eight), "missing-rank").empty());
}

TEST(WaitGraph, RanksInDifferentCollectivesAreAMismatch) {
  auto all = findings(mpi_job({"MPI_Allreduce", "MPI_Barrier"}));
  auto mismatch = with_rule(all, "collective-mismatch");
  ASSERT_EQ(mismatch.size(), 1u);
  EXPECT_THAT(mismatch[0].ranks, UnorderedElementsAre(0, 1));
  EXPECT_THAT(mismatch[0].summary, HasSubstr("rank 0 in MPI_Allreduce"));
  EXPECT_EQ(with_rule(all, "wait-cycle").size(), 1u) << "each waits for the other to join its collective";
}

TEST(WaitGraph, JsonAndDotCarryEveryNodeAndEdge) {
  auto g = build_wait_graph(mutex_deadlock());
  auto j = graph_json(g);
  EXPECT_EQ(j["nodes"].size(), g.nodes.size());
  EXPECT_EQ(j["edges"].size(), g.edges.size());
  auto dot = graph_dot(g, true);
  EXPECT_THAT(dot, HasSubstr("digraph"));
  EXPECT_THAT(dot, HasSubstr("color=red"));
}

}  // namespace

namespace {

// Two processes sharing one mapping of two process-shared mutexes: the owner field
// names the other process's thread.
TEST(WaitGraph, ProcessSharedMutexesAcrossTwoProcessesAreOneCycle) {
  Snapshot s;
  for (int i = 0; i < 2; ++i) {
    auto p = process(500 + i, 1, "shm");
    auto t = thread(500 + i, "shm", "futex", {0x7000u + 8u * i, 128, 2});
    t.futex_word = 2;
    t.futex_owner = 501 - i;
    p.threads = {t};
    stack(p, 500 + i, {"__lll_lock_wait", "__pthread_mutex_lock", "play", "main"});
    s.processes.push_back(p);
  }
  auto cycles = with_rule(findings(s), "wait-cycle");
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].pids, UnorderedElementsAre(500, 501));
}

// A priority-inheritance pair: one thread waits in FUTEX_LOCK_PI on the word that
// names its owner; the other was parked by glibc when the kernel refused its lock.
TEST(WaitGraph, APiMutexDeadlockTheKernelRefusedIsOneCycle) {
  Snapshot s;
  auto p = process(600, 1, "pi");
  auto first = thread(601, "pi", "futex", {0x8000, 134, 0});
  first.futex_word = 0x80000000u | 602u;
  auto second = thread(602, "pi", "futex", {0x9000, 393, 0});
  second.futex_word = 0;
  p.threads = {thread(600, "pi", "futex", {0xa000, 265, 601}), first, second};
  p.threads[0].futex_word = 601;
  stack(p, 600, {"__pthread_clockjoin_ex", "main"});
  stack(p, 601, {"__futex_lock_pi64", "__pthread_mutex_lock_full", "first"});
  stack(p, 602, {"__futex_abstimed_wait_common", "__pthread_mutex_lock_full", "second"});
  s.processes = {p};
  auto cycles = with_rule(findings(s), "wait-cycle");
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].tids, UnorderedElementsAre(601, 602));
}

// Python's main thread in Thread.join waits for the other Python threads: when they
// are a ring through the GIL and a pipe only the process itself writes, so is it.
TEST(WaitGraph, ThreadJoinInPythonWaitsForTheOtherPythonThreads) {
  Snapshot s;
  auto p = process(700, 1, "python3");
  p.threads = {thread(700, "python3", "futex", {0x10, 393, 0}), thread(701, "python3", "futex", {0x20, 137, 0}),
               thread(702, "python3", "read", {3})};
  p.descriptors = {pipe_fd(3, 960), pipe_fd(4, 960)};
  p.python.version = "3.12.3";
  p.python.gil_holder_tid = 702;
  p.python.threads = {{700, false, {{"Thread._wait_for_tstate_lock", "/usr/lib/python3.12/threading.py", 1167}}},
                      {701, false, {}},
                      {702, true, {}}};
  stack(p, 701, {"pthread_cond_timedwait", "take_gil", "PyEval_RestoreThread"});
  s.processes = {p};
  s.pipes = {{960, {{700, 3, 0}}, {{700, 4, 1}}}};
  auto g = build_wait_graph(s);
  EXPECT_TRUE(g.thread(700, 700)->stuck);
  EXPECT_EQ(with_rule(graph_findings(s, g), "wait-cycle").size(), 1u);
  // Without the join the main thread's futex is unknown: the process may still act through it.
  s.processes[0].python.threads[0].frames.clear();
  EXPECT_TRUE(with_rule(findings(s), "wait-cycle").empty());
}

TEST(WaitGraph, ARankInAShortSleepBetweenStepsIsNotMissingButOneAsleepForAnHourIs) {
  auto s = mpi_job({"MPI_Allreduce", "sleep"});
  s.processes[2].threads[0].sleep_left_s = 0.001;
  EXPECT_TRUE(with_rule(findings(s), "missing-rank").empty());
  s.processes[2].threads[0].sleep_left_s = 3599;
  EXPECT_EQ(with_rule(findings(s), "missing-rank").size(), 1u);
}

TEST(WaitGraph, AThreadThatKeptWakingBetweenTheTwoReadsIsNoRing) {
  auto s = pipe_ring('S');
  for (auto& p : s.processes) {
    p.threads[0].switches = 10;
    p.threads[0].switches_later = 12;  // a ptrace stop and resume: still waiting
  }
  EXPECT_EQ(with_rule(findings(s), "wait-cycle").size(), 1u);
  s.processes[1].threads[0].switches_later = 40;  // woke again and again: a ping-pong, not a ring
  EXPECT_TRUE(with_rule(findings(s), "wait-cycle").empty());
}

}  // namespace

namespace {

TEST(WaitGraph, TheFlightRecorderShowsRanksPendingInDifferentCollectives) {
  Snapshot s;
  auto launcher = process(800, 1, "torchrun");
  launcher.threads = {thread(800, "torchrun", "clock_nanosleep")};
  s.processes.push_back(launcher);
  const char* ops[] = {"nccl:all_reduce", "nccl:broadcast"};
  for (int r = 0; r < 2; ++r) {
    auto p = process(801 + r, 800, "python3", r, 2);
    p.threads = {thread(801 + r, "python3", "futex", {0x10, 137, 0})};
    p.flight_recorder.summary = {{"last_enqueued", {{"op", ops[r]}, {"collective_seq_id", 7}, {"state", "scheduled"}}}};
    s.processes.push_back(p);
  }
  auto mismatch = with_rule(findings(s), "collective-mismatch");
  ASSERT_EQ(mismatch.size(), 1u);
  EXPECT_THAT(mismatch[0].ranks, UnorderedElementsAre(0, 1));
  EXPECT_THAT(mismatch[0].summary, HasSubstr("rank 1 in nccl:broadcast (collective #7)"));
  // The same collective on both: no mismatch.
  s.processes[2].flight_recorder.summary["last_enqueued"]["op"] = "nccl:all_reduce";
  EXPECT_TRUE(with_rule(findings(s), "collective-mismatch").empty());
}

}  // namespace

namespace {

// Debian's python3.11 strips take_gil: the waiter's stack is a condition variable
// wait under unnamed frames under the eval loop. It still waits for the GIL.
TEST(WaitGraph, AGilWaitWithoutTheInterpretersSymbolsIsStillOne) {
  Snapshot s;
  auto p = process(900, 1, "python3");
  p.threads = {thread(900, "python3", "read", {5}), thread(901, "python3", "futex", {0x10, 137, 0})};
  p.descriptors = {pipe_fd(5, 970), pipe_fd(6, 970)};
  p.python.version = "3.11.2";
  p.python.gil_holder_tid = 900;
  p.python.threads = {{900, true, {}}, {901, false, {}}};
  stack(p, 901,
        {"__futex_abstimed_wait_common", "pthread_cond_timedwait@@GLIBC_2.3.2", "??", "_PyEval_EvalFrameDefault"});
  s.processes = {p};
  s.pipes = {{970, {{900, 5, 0}}, {{900, 6, 1}}}};
  auto convoy = with_rule(findings(s), "gil-convoy");
  ASSERT_EQ(convoy.size(), 1u);
  EXPECT_THAT(convoy[0].tids, ElementsAre(900, 901));
  // A Python-level lock wait (a named call between the wait and the eval loop) is not the GIL.
  s.processes[0].stacks.threads[0].functions = {"__futex_abstimed_wait_common", "pthread_cond_timedwait",
                                                "PyThread_acquire_lock_timed", "_PyEval_EvalFrameDefault"};
  EXPECT_TRUE(with_rule(findings(s), "gil-convoy").empty());
}

}  // namespace

// A rank's wait for the GPU says whether it spins on a CPU or sleeps in the driver.
TEST(WaitGraph, AGpuWaitSaysWhetherItSpinsOrSleeps) {
  auto spinning = process(10, 1, "rank0", 0, 2);
  spinning.threads = {thread(10, "rank0", "running")};
  stack(spinning, 10, {"cuStreamSynchronize", "cudaStreamSynchronize", "main"});
  auto sleeping = process(20, 1, "rank1", 1, 2);
  sleeping.threads = {thread(20, "rank1", "ioctl")};
  stack(sleeping, 20, {"ioctl", "cuStreamSynchronize", "cudaStreamSynchronize", "main"});
  Snapshot s;
  s.target_pids = {10, 20};
  s.processes = {spinning, sleeping};
  const WaitGraph g = build_wait_graph(s);
  std::string evidence;
  for (const auto& e : g.edges) evidence += e.evidence + "\n";
  EXPECT_THAT(evidence, HasSubstr("thread 10 waits in cuStreamSynchronize for GPU work, spinning on a CPU"));
  EXPECT_THAT(evidence, HasSubstr("thread 20 waits in cuStreamSynchronize for GPU work, asleep in the driver"));
}

namespace {

// Two torchrun ranks on one launcher, each with its Flight Recorder's pending operation.
Snapshot two_ranks_pending(const std::string& op0, const std::string& op1) {
  Snapshot s;
  auto launcher = process(900, 1, "torchrun");
  launcher.threads = {thread(900, "torchrun", "clock_nanosleep")};
  s.processes.push_back(launcher);
  const std::string ops[] = {op0, op1};
  for (int r = 0; r < 2; ++r) {
    auto p = process(901 + r, 900, "python3", r, 2);
    p.threads = {thread(901 + r, "python3", "futex", {0x10, 137, 0})};
    if (ops[r].empty())
      p.flight_recorder.summary = {{"last_enqueued", {{"op", "nccl:all_reduce"}, {"state", "completed"}}}};
    else
      p.flight_recorder.summary = {{"last_enqueued", {{"op", ops[r]}, {"state", "scheduled"}}}};
    s.processes.push_back(p);
  }
  return s;
}

TEST(WaitGraph, ASendWhosePeerIsInACollectiveIsUnmatched) {
  auto unmatched = with_rule(findings(two_ranks_pending("nccl:send 0->1", "nccl:all_reduce")), "p2p-unmatched");
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_EQ(unmatched[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(unmatched[0].pids, (std::vector<int>{901, 902}));
  EXPECT_THAT(unmatched[0].summary, HasSubstr("rank 1 posts a receive from rank 0"));
  EXPECT_THAT(unmatched[0].summary, HasSubstr("pending in nccl:all_reduce instead"));
}

TEST(WaitGraph, AReceiveWhosePeerCompletedEverythingIsUnmatched) {
  auto unmatched = with_rule(findings(two_ranks_pending("", "nccl:recv 1<-0")), "p2p-unmatched");
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_EQ(unmatched[0].ranks, (std::vector<int>{1, 0}));
  EXPECT_THAT(unmatched[0].summary, HasSubstr("posts a send to rank 1"));
  EXPECT_THAT(unmatched[0].summary, HasSubstr("pending in no operation"));
}

TEST(WaitGraph, ASendAndItsMatchingReceiveAreNoFinding) {
  EXPECT_TRUE(with_rule(findings(two_ranks_pending("nccl:send 0->1", "nccl:recv 1<-0")), "p2p-unmatched").empty());
  // Two sends to each other: neither is the other's match.
  EXPECT_EQ(with_rule(findings(two_ranks_pending("nccl:send 0->1", "nccl:send 1->0")), "p2p-unmatched").size(), 2u);
}

// No dumps (the H200's all-reduce beside a send): the sender's rank is stuck connecting
// its pair on first use while the other rank waits for the GPU.
TEST(WaitGraph, ARankStuckConnectingAPairWhileItsPeerWaitsForTheGpuIsUnmatched) {
  Snapshot s = two_ranks_pending("", "");
  for (int r = 0; r < 2; ++r) s.processes[1 + r].flight_recorder = {};
  auto& r0 = s.processes[1];
  r0.threads = {thread(901, "python3", "ioctl")};
  stack(r0, 901, {"ioctl", "cuCtxSynchronize_v2", "cudaDeviceSynchronize", "c10::cuda::device_synchronize()"});
  auto& r1 = s.processes[2];
  r1.threads = {thread(902, "python3", "accept")};
  stack(r1, 902,
        {"accept", "socketTryAccept", "ncclSocketAccept(ncclSocket*, ncclSocket*)",
         "bootstrapRecv(void*, int, int, void*, int)", "ncclTransportP2pSetup(ncclComm*, ncclTopoGraph*, int)",
         "ncclP2PPreconnectFunc(ncclAsyncJob*)"});
  auto unmatched = with_rule(findings(s), "p2p-unmatched");
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_EQ(unmatched[0].ranks, (std::vector<int>{1, 0}));
  EXPECT_EQ(unmatched[0].tids, (std::vector<int>{902}));
  EXPECT_THAT(unmatched[0].summary, HasSubstr("rank 0 (pid 901) waits in cudaDeviceSynchronize"));
  // Both ranks connecting their pair: they are making each other's match.
  r0.stacks.threads.clear();
  stack(r0, 901,
        {"poll", "ncclTransportP2pSetup(ncclComm*, ncclTopoGraph*, int)", "ncclP2PPreconnectFunc(ncclAsyncJob*)"});
  EXPECT_TRUE(with_rule(findings(s), "p2p-unmatched").empty());
}

// NCCL 2.22.3's connection at the first collective (catalog nccl-first-collective-connect):
// rank 0's ncclAllReduce waits in ncclGroupEnd for NCCL's job thread, which connects the
// ring and needs rank 1 inside NCCL; rank 1 reads a pipe that only rank 0 writes.
Snapshot first_collective_connect() {
  Snapshot s;
  auto r0 = process(700, 1, "nccl_first_coll", 0, 2);
  auto r1 = process(701, 700, "nccl_first_coll", 1, 2);
  auto main0 = thread(700, "nccl_first_coll", "clock_nanosleep");
  main0.seen_asleep = true;  // its loop sleeps a microsecond between looks at the job thread
  auto job0 = thread(703, "nccl_first_coll", "accept");
  r0.threads = {main0, job0};
  stack(r0, 700,
        {"clock_nanosleep", "usleep", "asyncJobLaunch", "groupLaunch", "ncclGroupEndInternal", "ncclEnqueueCheck",
         "ncclAllReduce", "main"});
  stack(r0, 703,
        {"accept", "socketTryAccept", "ncclSocketAccept(ncclSocket*, ncclSocket*)",
         "bootstrapRecv(void*, int, int, void*, int)", "ncclTransportP2pSetup(ncclComm*, ncclTopoGraph*, int)",
         "ncclTransportRingConnect(ncclComm*)", "ncclCollPreconnectFunc(ncclAsyncJob*)", "ncclAsyncJobMain",
         "start_thread"});
  s.processes.push_back(r0);
  r1.threads = {thread(701, "nccl_first_coll", "read", {5})};
  stack(r1, 701, {"read", "main"});
  r1.descriptors = {pipe_fd(5, 4711)};
  s.processes.push_back(r1);
  r0.descriptors = {pipe_fd(6, 4711)};
  s.processes[0].descriptors = {pipe_fd(6, 4711)};
  s.processes[0].descriptors[0].flags = 1;  // O_WRONLY
  s.pipes.push_back({4711, {{701, 5, 0}}, {{700, 6, 1}}});
  return s;
}

TEST(WaitGraph, AFirstCollectiveThatConnectsWhileItsPeerWaitsForThisRankIsAConnectCycle) {
  const Snapshot s = first_collective_connect();
  auto connect = with_rule(findings(s), "nccl-connect-cycle");
  ASSERT_EQ(connect.size(), 1u);
  EXPECT_EQ(connect[0].severity, Severity::Hang);
  EXPECT_THAT(connect[0].pids, UnorderedElementsAre(700, 701));
  EXPECT_THAT(connect[0].tids, UnorderedElementsAre(700, 703, 701));
  EXPECT_THAT(connect[0].ranks, UnorderedElementsAre(0, 1));
  EXPECT_THAT(connect[0].facts, testing::Contains("nccl connection: collective"));
  EXPECT_THAT(connect[0].summary, HasSubstr("ncclTransportRingConnect"));
  EXPECT_THAT(connect[0].summary, HasSubstr("pipe 4711"));
  EXPECT_TRUE(with_rule(findings(s), "wait-cycle").empty()) << "one ring, one finding";
  // The main thread's microsecond sleeps are NCCL's wait, not a step of the program's own work.
  EXPECT_TRUE(build_wait_graph(s).thread(700, 700)->stuck);
}

// The H100's first-collective hang was told twice: the pipe reader's finding beside the ring
// that holds its read. The ring names the pipe and its writer, so it is told once.
TEST(WaitGraph, APipeReaderInsideARingIsToldByTheRingAlone) {
  for (const Snapshot& s : {first_collective_connect(), pipe_ring('S')}) {
    const auto all = find_hang_shapes(s);
    EXPECT_TRUE(with_rule(all, "pipe-writer-held").empty());
    EXPECT_EQ(with_rule(all, "nccl-connect-cycle").size() + with_rule(all, "wait-cycle").size(), 1u);
  }
  // Readers whose waits end at a stopped process, in no ring, are still told by the pipe rule.
  Snapshot chain = pipe_ring('T');
  chain.processes[2].threads[0].state = 'T';
  const auto all = find_hang_shapes(chain);
  EXPECT_TRUE(with_rule(all, "wait-cycle").empty());
  EXPECT_FALSE(with_rule(all, "pipe-writer-held").empty());
}

TEST(WaitGraph, AConnectionAtInitIsNotAFirstCollectivesAndAPeerInsideNcclIsNoCycle) {
  Snapshot s = first_collective_connect();
  auto& job = s.processes[0].stacks.threads[1].functions;
  job.insert(job.end() - 2, {"initTransportsRank", "ncclCommInitRankFunc"});
  auto connect = with_rule(findings(s), "nccl-connect-cycle");
  ASSERT_EQ(connect.size(), 1u);
  EXPECT_THAT(connect[0].facts, testing::Contains("nccl connection: init"));
  // Rank 1 inside NCCL's handshake too: they connect each other, nothing waits in a ring.
  s = first_collective_connect();
  s.processes[1].threads = {thread(701, "nccl_first_coll", "accept")};
  stack(s.processes[1], 701,
        {"accept", "ncclTransportRingConnect(ncclComm*)", "ncclCollPreconnectFunc(ncclAsyncJob*)"});
  s.processes[1].stacks.threads.erase(s.processes[1].stacks.threads.begin());
  EXPECT_TRUE(with_rule(findings(s), "nccl-connect-cycle").empty());
}

}  // namespace

namespace {

// The H100's collective_mismatch_nccl, from its dumps: rank 0 pending in all-reduce #2;
// rank 1's send #1 completed, and rank 1 stuck elsewhere (its connection of the pair).
TEST(WaitGraph, ARankPendingAtALaterSequenceThanAStuckRanksLastCompletedIsAMismatch) {
  Snapshot s = two_ranks_pending("nccl:all_reduce", "");
  s.processes[1].flight_recorder.summary["last_enqueued"]["collective_seq_id"] = 2;
  s.processes[2].flight_recorder.summary = {
      {"last_enqueued", {{"op", "nccl:send 1->0"}, {"collective_seq_id", 1}, {"state", "completed"}}}};
  auto mismatch = with_rule(findings(s), "collective-mismatch");
  ASSERT_EQ(mismatch.size(), 1u);
  EXPECT_THAT(mismatch[0].ranks, UnorderedElementsAre(0, 1));
  EXPECT_THAT(mismatch[0].summary, HasSubstr("rank 0 in nccl:all_reduce (collective #2)"));
  EXPECT_THAT(mismatch[0].summary, HasSubstr("nccl:send 1->0 (collective #1), completed, and it never called #2"));
  // Rank 1 running inside NCCL's connection of a pair (it polls a non-blocking accept): still stuck.
  s.processes[2].threads = {thread(902, "python3", "running")};
  stack(s.processes[2], 902,
        {"socketTryAccept", "ncclSocketAccept(ncclSocket*, ncclSocket*)", "ncclP2PPreconnectFunc"});
  EXPECT_EQ(with_rule(findings(s), "collective-mismatch").size(), 1u);
  // The same rank 1 running outside NCCL (computing towards #2): a straggler, no mismatch.
  s.processes[2].stacks.threads.clear();
  stack(s.processes[2], 902, {"at::native::addmm_out", "_PyEval_EvalFrameDefault"});
  EXPECT_TRUE(with_rule(findings(s), "collective-mismatch").empty());
}

}  // namespace

// The seed's PP4 cycle as a snapshot: stage 0's main thread spins in a kernel launch
// behind its NCCL send while its watchdog thread waits for a signal; stages 1 to 3
// spin in MPI_Recv. A receive waits for the peer's thread that talks to the job, not
// for the watchdog beside it; its source is not read, so its edges are "any of".
Snapshot pp4_cycle() {
  Snapshot s;
  for (int rank = 0; rank < 4; ++rank) {
    const int pid = 500 + 10 * rank;
    auto p = process(pid, 499, "pp_pipeline", rank, 4);
    p.libraries = {"/opt/nccl/lib/libnccl.so.2"};
    p.threads = {thread(pid, "pp_pipeline", "running"), thread(pid + 1, "pp_hang_watch", "rt_sigtimedwait")};
    if (rank == 0)
      stack(p, pid, {"cuLaunchKernel", "cudaLaunchKernel", "pp::gpu::StageExecutor::cold_call", "main"});
    else
      stack(p, pid, {"ucp_worker_progress", "mca_pml_ucx_recv", "MPI_Recv", "pp::StageChannel::receive_bytes", "main"});
    stack(p, pid + 1, {"__sigtimedwait", "pp::HangWatcher::run", "execute_native_thread_routine", "start_thread"});
    s.processes.push_back(std::move(p));
  }
  return s;
}

TEST(WaitGraph, ThePp4CycleIsARingThroughStageZerosGpuWaitNotItsWatchdog) {
  auto s = pp4_cycle();
  auto g = build_wait_graph(s);
  auto cycles = with_rule(graph_findings(s, g), "wait-cycle");
  ASSERT_EQ(cycles.size(), 1u);
  // The ring with the fewest guessed edges: stage 0's GPU wait and one receiver.
  ASSERT_EQ(cycles[0].tids.size(), 2u);
  EXPECT_THAT(cycles[0].tids, ::testing::Contains(500));
  EXPECT_THAT(cycles[0].summary, HasSubstr("cuLaunchKernel"));
  EXPECT_THAT(cycles[0].summary, HasSubstr("the receive's source was not read"));
  for (const auto& e : g.edges)
    if (g.nodes[e.to].kind == NodeKind::Thread && g.nodes[e.to].tid % 10 == 1)  // a watchdog
      EXPECT_EQ(g.nodes[e.from].kind, NodeKind::Process) << e.evidence;
}

TEST(WaitGraph, AReceiveWithOnePossibleSenderIsNoGuess) {
  Snapshot s;
  for (int rank = 0; rank < 2; ++rank) {
    auto p = process(600 + rank, 1, "mpi", rank, 2);
    p.threads = {thread(600 + rank, "mpi", "running")};
    stack(p, 600 + rank, {"MPI_Recv", "main"});
    s.processes.push_back(std::move(p));
  }
  auto g = build_wait_graph(s);
  auto cycles = with_rule(graph_findings(s, g), "wait-cycle");
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].summary, Not(HasSubstr("source was not read")));
  for (const auto& e : g.edges) EXPECT_FALSE(e.any_of) << e.evidence;
}
