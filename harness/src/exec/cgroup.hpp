// A per-trial cgroup v2 (when the machine lets us write one): every process the
// trial starts stays listed in cgroup.procs and cgroup.kill ends them all.
#pragma once

#include <set>
#include <string>

namespace hangbench::exec_detail {

// The writable cgroup v2 folder under which trial groups are made, or "".
std::string find_writable_cgroup_root();

class TrialCgroup {
 public:
  TrialCgroup() = default;
  // Creates <root>/hangbench-<trial_id>; ok() is false when that fails.
  TrialCgroup(const std::string& root, const std::string& trial_id);
  ~TrialCgroup();
  TrialCgroup(const TrialCgroup&) = delete;
  TrialCgroup& operator=(const TrialCgroup&) = delete;

  bool ok() const { return !dir_.empty(); }
  bool add(int pid) const;
  std::set<int> pids() const;
  void kill_all() const;    // cgroup.kill, or SIGKILL to each pid when absent

 private:
  std::string dir_;
};

}  // namespace hangbench::exec_detail
