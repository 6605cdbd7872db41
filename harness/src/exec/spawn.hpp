// Starts a trial's root process: its own session and process group, stdio to the
// trial folder, optionally placed into a cgroup before it runs a single instruction
// of the workload. Async-signal-safe between fork and exec.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hangbench::exec_detail {

class TrialCgroup;

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] resolved through PATH here
  std::vector<std::string> env;   // "NAME=value", the complete environment
  std::string stdout_path, stderr_path;
  const TrialCgroup* cgroup = nullptr;  // may be null or not ok(); in a namespace: made by the init
  // Run as pid 2 of a new PID namespace under a small init (exec/pid_namespace.hpp).
  bool pid_namespace = false;
  // Runs in the parent once the child exists (and is in its cgroup) but before it
  // may exec: the trial watcher learns of the trial before it runs anything.
  std::function<void(int pid)> before_start;
};

struct SpawnResult {
  int pid = -1;  // > 0 on success: the trial's root (the namespace's init when there is one)
  bool in_cgroup = false;
  std::string error;  // why it could not start
  // In a PID namespace: the workload's host pid, and a non-blocking pipe on which
  // its wait status (an int) arrives when it ends; the caller closes status_fd.
  bool pid_namespace = false;
  int workload_pid = -1;
  int workload_namespace_pid = -1;  // the pid the workload sees as its own
  int status_fd = -1;
};

SpawnResult spawn_trial_process(const SpawnRequest& request);

// argv[0] as execve needs it: contains '/' -> as is; else the first PATH match; "" if none.
std::string resolve_executable(const std::string& name);

}  // namespace hangbench::exec_detail
