// A trial in its own PID namespace: the harness learns the workload's host pid,
// never its namespace pid. The namespace's own /proc once made the workload
// report the pid it sees as its host pid; with 24 trials at once, that number was
// another trial's process on the host, which the first trial's cleanup then
// ended (a hang cell's helper, CI and this machine, 2026-12-03).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "exec/pid_namespace.hpp"
#include "exec/spawn.hpp"

namespace hangbench::exec_detail {
namespace {

// The last NSpid field of /proc/PID/status: the pid in the innermost namespace.
int innermost_pid_of(int host_pid) {
  std::ifstream in("/proc/" + std::to_string(host_pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    return std::atoi(line.c_str() + line.find_last_of(" \t") + 1);
  }
  return -1;
}

TEST(SpawnInNamespace, TheWorkloadPidIsItsHostPid) {
  ASSERT_TRUE(pid_namespaces_available()) << "this test needs PID namespaces (root, as CI has)";
  SpawnRequest request;
  request.argv = {"sleep", "30"};
  request.env = {"PATH=/usr/bin:/bin"};
  request.stdout_path = request.stderr_path = "/dev/null";
  request.pid_namespace = true;
  SpawnResult spawned = spawn_trial_process(request);
  ASSERT_GT(spawned.pid, 0) << spawned.error;
  ASSERT_GT(spawned.workload_pid, 0);
  EXPECT_NE(spawned.workload_pid, spawned.workload_namespace_pid);
  // The host pid is a process whose innermost pid is the one the workload sees.
  EXPECT_EQ(innermost_pid_of(spawned.workload_pid), spawned.workload_namespace_pid);
  ::kill(spawned.pid, namespace_end_signal());
  ::waitpid(spawned.pid, nullptr, 0);
  if (spawned.status_fd >= 0) ::close(spawned.status_fd);
}

}  // namespace
}  // namespace hangbench::exec_detail
