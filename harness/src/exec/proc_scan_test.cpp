// A trial's processes are known by pid and start time: a pid the kernel handed
// to another process is not the trial's (ten harnesses at once on two cores
// recycled pids within a minute, and a trial's cleanup ended another run's
// workload; CI, 2026-12-03).
#include "exec/proc_scan.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hangbench::exec_detail {
namespace {

// A sleeping child in a session of its own, ended and reaped at scope exit.
struct Sleeper {
  pid_t pid = -1;
  Sleeper() {
    pid = ::fork();
    if (pid == 0) {
      ::setsid();
      ::pause();
      ::_exit(0);
    }
  }
  ~Sleeper() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST(ProcScan, AKnownPidWithItsStartTimeIsAMember) {
  Sleeper other;
  KnownProcesses known;
  remember(known, other.pid);
  ASSERT_EQ(known.count(other.pid), 1u);
  auto procs = find_trial_processes(/*root_sid=*/-1, "HANGBENCH_TRIAL_ID=none", known, {}, false);
  EXPECT_EQ(procs.live.count(other.pid), 1u);
}

TEST(ProcScan, AKnownPidNowHeldByAnotherProcessIsNot) {
  Sleeper other;
  KnownProcesses known;
  remember(known, other.pid);
  known[other.pid] += 1;  // the trial's process of that pid started at another time
  auto procs = find_trial_processes(-1, "HANGBENCH_TRIAL_ID=none", known, {}, false);
  EXPECT_EQ(procs.live.count(other.pid), 0u);
}

TEST(ProcScan, TheSessionOfARootPidAnotherProcessHoldsIsNotTheTrials) {
  Sleeper other;  // a session leader: its pid is its session id
  KnownProcesses known;
  remember(known, other.pid);
  EXPECT_EQ(find_trial_processes(other.pid, "HANGBENCH_TRIAL_ID=none", known, {}, false).live.count(other.pid), 1u);
  known[other.pid] += 1;  // the trial's root had that pid and is gone
  EXPECT_EQ(find_trial_processes(other.pid, "HANGBENCH_TRIAL_ID=none", known, {}, false).live.count(other.pid), 0u);
}

// The scan hands back the start time it read of each process it found, which
// is what the executor remembers of them (no second read of their stat).
TEST(ProcScan, AScanHandsBackEachMembersStartTime) {
  Sleeper other;
  KnownProcesses known;
  remember(known, other.pid);
  auto procs = find_trial_processes(other.pid, "HANGBENCH_TRIAL_ID=none", {}, {}, false);
  ASSERT_EQ(procs.live.count(other.pid), 1u);
  EXPECT_EQ(procs.start_ticks, known);
}

TEST(ProcScan, ACgroupMemberNeedsNoHistory) {
  Sleeper other;
  auto procs = find_trial_processes(-1, "HANGBENCH_TRIAL_ID=none", {}, {other.pid}, false);
  EXPECT_EQ(procs.live.count(other.pid), 1u);
}

}  // namespace
}  // namespace hangbench::exec_detail
