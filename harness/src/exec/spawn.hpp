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
  const TrialCgroup* cgroup = nullptr;  // may be null or not ok()
  // Runs in the parent once the child exists (and is in its cgroup) but before it
  // may exec: the trial watcher learns of the trial before it runs anything.
  std::function<void(int pid)> before_start;
};

struct SpawnResult {
  int pid = -1;  // > 0 on success
  bool in_cgroup = false;
  std::string error;  // why it could not start
};

SpawnResult spawn_trial_process(const SpawnRequest& request);

// argv[0] as execve needs it: contains '/' -> as is; else the first PATH match; "" if none.
std::string resolve_executable(const std::string& name);

}  // namespace hangbench::exec_detail
