// A rank that rank 0 starts as this program again (posix_spawn of /proc/self/exe):
// killed and reaped when rank 0 gives up before waiting for it, so nothing it does
// outlives rank 0's exit.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "log_line.hpp"
#include "workload_exit_codes.hpp"

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
  // Waits for it as a rank that must end with exit 0: 0 when it did; otherwise logs that
  // `name` did not end cleanly and returns its exit code, or kRunError when it was killed
  // or could not be reaped (its exit code is then the trial's).
  int wait_for_clean_exit(const std::string& name) {
    const int status = wait();
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    log_line(name + " did not end cleanly");
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : workload_exit::kRunError;
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

// This environment with RANK and WORLD_SIZE set for `rank`: the launcher's view that
// diagnose reads from /proc/PID/environ (a rank with no live process is a missing rank).
inline std::vector<std::string> environment_for_rank(int rank, int world) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "RANK=", 5) == 0 || std::strncmp(*e, "WORLD_SIZE=", 11) == 0) continue;
    env.emplace_back(*e);
  }
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=" + std::to_string(world));
  return env;
}

// Rank 0 started by hand (no RANK in its environment) runs again as rank 0 of `world`, so
// that its /proc/PID/environ names it as a launcher would: a process's starting
// environment is what another process can read, and setenv does not change it. Returns
// only when RANK is already set (or the exec failed: the run goes on unnamed).
inline void run_as_rank0_of(int world, char** argv) {
  if (std::getenv("RANK")) return;
  std::vector<std::string> env = environment_for_rank(0, world);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  ::execve("/proc/self/exe", argv, envp.data());
}

}  // namespace hangbench::workload
