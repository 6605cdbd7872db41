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
  // Their children too (a rank's forked workers), which may have dropped the tag.
  std::vector<int> roots(found.begin(), found.end());
  for (int root : roots)
    if (root != self)
      for (int pid : proc::process_tree(proc_root, root))
        if (pid != self) found.insert(pid);
  return {found.begin(), found.end()};
}

}  // namespace hangbench::diagnose
