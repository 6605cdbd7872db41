#include "exec/leftovers.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

#include "exec/cgroup.hpp"
#include "exec/proc_scan.hpp"

namespace hangbench::exec_detail {
namespace {

std::string join(const std::set<int>& pids) {
  std::string out;
  for (int pid : pids) out += (out.empty() ? "" : " ") + std::to_string(pid);
  return out;
}

// Live processes whose environment has HANGBENCH_TRIAL_DIR=<out_dir>/trials/...
std::set<int> folder_survivors(const std::string& out_dir) {
  std::set<int> out;
  const std::string prefix = "HANGBENCH_TRIAL_DIR=" + out_dir + "/trials/";
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  const int self = static_cast<int>(::getpid());
  while (dirent* e = ::readdir(dir)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 1 || pid == self) continue;
    auto st = read_proc_stat(pid);
    if (st && st->state != 'Z' && environ_has_prefix(pid, prefix)) out.insert(pid);
  }
  ::closedir(dir);
  return out;
}

}  // namespace

std::vector<std::string> end_leftovers(const std::string& cgroup_root, const std::string& out_dir) {
  std::vector<std::string> lines;
  for (const auto& stale : remove_stale_cgroups(cgroup_root)) {
    lines.push_back(fmt::format("removed stale cgroup {} (its harness, pid {}, is gone){}{}", stale.name,
                                stale.owner_pid,
                                stale.ended.empty() ? "" : "; ended its processes " + join(stale.ended),
                                stale.removed ? "" : "; the group is still busy and was left"));
  }
  std::set<int> survivors = folder_survivors(out_dir);
  if (survivors.empty()) return lines;
  std::set<int> ended = survivors;
  // SIGKILL until none is left: a dead run's trial has no one to report to.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!survivors.empty() && std::chrono::steady_clock::now() < deadline) {
    for (int pid : survivors) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    survivors = folder_survivors(out_dir);
    ended.insert(survivors.begin(), survivors.end());
  }
  lines.push_back(
      fmt::format("ended {} process(es) of an earlier run's trials in {}: {}", ended.size(), out_dir, join(ended)));
  if (!survivors.empty()) lines.push_back("still alive after SIGKILL: " + join(survivors));
  return lines;
}

}  // namespace hangbench::exec_detail
