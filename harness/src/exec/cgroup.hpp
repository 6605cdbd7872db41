// A per-trial cgroup v2 (when the machine lets us write one): every process the
// trial starts stays listed in cgroup.procs and cgroup.kill ends them all.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace hangbench::exec_detail {

// The writable cgroup v2 folder under which trial groups are made, or "" (also
// when HANGBENCH_NO_CGROUPS is set to anything but 0).
std::string find_writable_cgroup_root();

// "<pid>.<start ticks>" of this process: trial groups are named
// hangbench-<owner>-<trial id>, so that a later harness can tell a group whose
// owner is gone (even when its pid was reused) from a live harness's.
std::string cgroup_owner_tag();

class TrialCgroup {
 public:
  TrialCgroup() = default;
  // Creates <root>/hangbench-<owner tag>-<trial_id>; ok() is false when that fails.
  // With create = false only its path is planned (a trial's namespace init makes
  // and joins it itself) until adopt() says it exists.
  TrialCgroup(const std::string& root, const std::string& trial_id, bool create = true);
  ~TrialCgroup();
  TrialCgroup(const TrialCgroup&) = delete;
  TrialCgroup& operator=(const TrialCgroup&) = delete;

  bool ok() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  const std::string& planned() const { return planned_; }
  const std::string& root() const { return root_; }
  void adopt() { dir_ = planned_; }
  bool add(int pid) const;
  std::set<int> pids() const;
  void kill_all() const;  // cgroup.kill, or SIGKILL to each pid when absent

 private:
  std::string dir_;
  std::string planned_, root_;
};

// The same operations on a group known only by its folder.
std::set<int> cgroup_pids(const std::string& dir);
void kill_cgroup(const std::string& dir);
// rmdir, retried while the group still empties (a killed process leaves it as it
// exits, not at once); false if it is still there after `bound_s`.
bool remove_cgroup(const std::string& dir, double bound_s);

// A hangbench group under `root` whose owner is no longer alive, found and removed.
struct StaleCgroup {
  std::string name;  // hangbench-...
  int owner_pid = 0;
  std::set<int> ended;  // processes that were still inside
  bool removed = false;
};
// Ends the processes of every stale group under `root` and removes the groups.
// Groups of a live owner (another harness running now) are left alone.
std::vector<StaleCgroup> remove_stale_cgroups(const std::string& root);

}  // namespace hangbench::exec_detail
