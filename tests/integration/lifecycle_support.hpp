// Helpers of the lifecycle tests: start the hangbench CLI and other programs with
// their output in a log, wait for exit codes and conditions, find what a harness
// left behind (trial processes, cgroups).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exec/cgroup.hpp"
#include "exec/proc_scan.hpp"

extern char** environ;

namespace hangbench::test {

namespace fs = std::filesystem;

inline const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
inline const std::string kFixtures = std::string(HB_FIXTURES_DIR) + "/matrix/";
using Clock = std::chrono::steady_clock;

inline pid_t spawn(const std::vector<std::string>& argv_in, const fs::path& log,
                   const std::vector<std::string>& extra_env = {}) {
  std::vector<char*> argv;
  for (const auto& a : argv_in) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

inline pid_t hangbench(const std::vector<std::string>& args, const fs::path& log,
                       const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{kHangbench};
  argv.insert(argv.end(), args.begin(), args.end());
  return spawn(argv, log, env);
}

inline int wait_exit_code(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Live processes of trials under `out` (their environment names a trial folder there).
inline std::set<int> trial_processes(const fs::path& out) {
  std::set<int> pids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid <= 1 || pid == ::getpid()) continue;
    auto st = exec_detail::read_proc_stat(pid);
    if (st && st->state != 'Z' && exec_detail::environ_has_prefix(pid, "HANGBENCH_TRIAL_DIR=" + out.string() + "/")) {
      pids.insert(pid);
    }
  }
  return pids;
}

// Trial groups of one harness (named hangbench-<pid>.<start>-...).
inline int cgroups_of(int harness_pid) {
  std::string root = exec_detail::find_writable_cgroup_root();
  if (root.empty()) return 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    n += e.path().filename().string().rfind("hangbench-" + std::to_string(harness_pid) + ".", 0) == 0;
  }
  return n;
}

// Polls `done` until it holds; false after `bound_s` (a bound to fail, never to pass).
template <typename F>
inline bool wait_for(F done, double bound_s) {
  auto until = Clock::now() + std::chrono::duration<double>(bound_s);
  while (Clock::now() < until) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {  // orphans reparented to us (subreaper)
    }
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace hangbench::test
