// A rank that rank 0 starts as this program again (posix_spawn of /proc/self/exe):
// killed and reaped when rank 0 gives up before waiting for it, so nothing it does
// outlives rank 0's exit.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace hangbench::workload {

struct SpawnedRank {
  pid_t pid = 0;
  SpawnedRank() = default;
  SpawnedRank(const SpawnedRank&) = delete;
  SpawnedRank& operator=(const SpawnedRank&) = delete;
  ~SpawnedRank() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  // Its wait status, -1 when it could not be reaped; afterwards there is nothing left to kill.
  int wait() {
    int status = 0;
    const bool reaped = ::waitpid(pid, &status, 0) == pid;
    pid = 0;
    return reaped ? status : -1;
  }
};

// Starts /proc/self/exe with `args` (argv[0] included) and `env` (empty: this
// process's environment). Returns the pid, or throws std::runtime_error.
inline pid_t spawn_self(std::vector<std::string> args, std::vector<std::string> env = {}) {
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), env.empty() ? environ : envp.data()) != 0)
    throw std::runtime_error("could not start /proc/self/exe");
  return pid;
}

}  // namespace hangbench::workload
