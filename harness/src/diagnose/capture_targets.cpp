// trial_processes_on_host_name(): a hung launcher trial's ranks, found where the
// launcher put them rather than under the launcher.
#include <unistd.h>

#include <algorithm>
#include <set>

#include "hangbench/clock.hpp"
#include "hangbench/evidence.hpp"
#include "hangbench/flight_recorder.hpp"
#include "hangbench/proc.hpp"

namespace hangbench::diagnose {

namespace {

bool carries(const std::string& root, int pid, const std::string& entry) {
  auto env = read_environment(root, pid);
  auto eq = entry.find('=');
  if (eq == std::string::npos) return false;
  auto it = env.find(entry.substr(0, eq));
  return it != env.end() && it->second == entry.substr(eq + 1);
}

}  // namespace

std::vector<int> trial_processes_on_this_host(const std::vector<int>& pids, const CaptureOptions& opts,
                                              const std::string& proc_root) {
  std::set<int> found(pids.begin(), pids.end());
  const int self = static_cast<int>(::getpid());
  if (!opts.trial_env_entry.empty()) {
    for (int pid : proc::list_pids(proc_root))
      if (pid != self && !found.count(pid) && carries(proc_root, pid, opts.trial_env_entry)) found.insert(pid);
    const std::string host = host_name();
    for (const auto& w : opts.phase_writers)
      if (w.pid > 0 && (w.host.empty() || w.host == host) && carries(proc_root, w.pid, opts.trial_env_entry))
        found.insert(w.pid);
  }
  // Their children too (a rank's forked workers), which may have dropped the tag:
  // one read of /proc for all of them, not one per process (a hung tree of 2,000
  // children, every one tagged, read /proc 2,000 times: issue 41, item 5).
  std::vector<int> roots;
  for (int pid : found)
    if (pid != self) roots.push_back(pid);
  for (int pid : proc::process_trees(proc_root, roots))
    if (pid != self) found.insert(pid);
  return {found.begin(), found.end()};
}

}  // namespace hangbench::diagnose
