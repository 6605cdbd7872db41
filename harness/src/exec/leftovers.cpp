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
#include "hangbench/matrix.hpp"

namespace hangbench::exec_detail {
namespace {

std::string join(const std::set<int>& pids) {
  std::string out;
  for (int pid : pids) out += (out.empty() ? "" : " ") + std::to_string(pid);
  return out;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Live processes whose HANGBENCH_TRIAL_DIR is a trial folder of one of the runs.
std::set<int> folder_survivors(const std::string& out_dir, const std::vector<std::string>& run_ids) {
  std::set<int> out;
  if (run_ids.empty()) return out;
  const std::string prefix = "HANGBENCH_TRIAL_DIR=" + out_dir + "/trials/";
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  const int self = static_cast<int>(::getpid());
  while (dirent* e = ::readdir(dir)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 1 || pid == self) continue;
    if (!environ_has_prefix(pid, prefix)) continue;  // cheap first cut: not under this folder at all
    auto st = read_proc_stat(pid);
    if (!st || st->state == 'Z') continue;
    auto trial_dir = environ_value(pid, "HANGBENCH_TRIAL_DIR");
    if (trial_dir && is_trial_dir_of(*trial_dir, out_dir, run_ids)) out.insert(pid);
  }
  ::closedir(dir);
  return out;
}

}  // namespace

bool is_trial_dir_of(const std::string& trial_dir, const std::string& out_dir,
                     const std::vector<std::string>& run_ids) {
  const std::string base = out_dir + "/trials/";
  if (trial_dir.compare(0, base.size(), base) != 0) return false;
  const std::string rest = trial_dir.substr(base.size());  // <run id>/<cell folder>/<index>
  const size_t a = rest.find('/');
  if (a == std::string::npos) return false;
  const size_t b = rest.find('/', a + 1);
  if (b == std::string::npos || b == a + 1) return false;
  if (!all_digits(rest.substr(b + 1))) return false;  // also: no deeper path
  const std::string run_folder = rest.substr(0, a);
  for (const auto& id : run_ids) {
    if (!id.empty() && sanitize_cell_id(id) == run_folder) return true;
  }
  return false;
}

std::vector<std::string> end_leftovers(const std::string& cgroup_root, const std::string& out_dir,
                                       const std::vector<std::string>& run_ids) {
  std::vector<std::string> lines;
  for (const auto& stale : remove_stale_cgroups(cgroup_root)) {
    lines.push_back(fmt::format("removed stale cgroup {} (its harness, pid {}, is gone){}{}", stale.name,
                                stale.owner_pid,
                                stale.ended.empty() ? "" : "; ended its processes " + join(stale.ended),
                                stale.removed ? "" : "; the group is still busy and was left"));
  }
  std::set<int> survivors = folder_survivors(out_dir, run_ids);
  if (survivors.empty()) return lines;
  std::set<int> ended = survivors;
  // SIGKILL until none is left: a dead run's trial has no one to report to.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!survivors.empty() && std::chrono::steady_clock::now() < deadline) {
    for (int pid : survivors) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    survivors = folder_survivors(out_dir, run_ids);
    ended.insert(survivors.begin(), survivors.end());
  }
  lines.push_back(
      fmt::format("ended {} process(es) of an earlier run's trials in {}: {}", ended.size(), out_dir, join(ended)));
  if (!survivors.empty()) lines.push_back("still alive after SIGKILL: " + join(survivors));
  return lines;
}

}  // namespace hangbench::exec_detail
