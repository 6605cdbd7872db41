// The harness's own end is bounded once it is told to stop: a cleanup that would
// take longer is cut short with exit 3 and a message, however long it would have run.
#include "run/stop_deadline.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace hangbench::run_detail {
namespace {

// In a child: the stop flag is set, then "cleanup" sleeps far past the bound.
int exit_code_of_a_stuck_stop(bool disarm_first) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::atomic<bool> stop{false};
    {
      StopDeadline deadline(&stop, 0.2);
      stop = true;
      if (!disarm_first) std::this_thread::sleep_for(std::chrono::seconds(600));
    }
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(StopDeadline, AStuckCleanupEndsTheHarnessWithExitThree) { EXPECT_EQ(exit_code_of_a_stuck_stop(false), 3); }

TEST(StopDeadline, AFinishedRunDisarmsIt) { EXPECT_EQ(exit_code_of_a_stuck_stop(true), 0); }

}  // namespace
}  // namespace hangbench::run_detail
