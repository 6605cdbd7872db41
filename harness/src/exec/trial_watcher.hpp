// The trial watcher: a small process forked from the harness that outlives it.
// The harness tells it over a socket which trials are in flight (their root pid,
// tag and cgroup); when the socket closes because the harness is gone (normal
// exit, exception, any signal, SIGKILL included), it ends every process of the
// trials still listed and removes their cgroups. docs/lifecycle.md has the design.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace hangbench::exec_detail {

class TrialWatcher {
 public:
  TrialWatcher();   // forks the watcher; ok() is false when that failed
  ~TrialWatcher();  // closes the socket (the watcher ends what is still listed) and reaps it
  TrialWatcher(const TrialWatcher&) = delete;
  TrialWatcher& operator=(const TrialWatcher&) = delete;

  bool ok() const { return pid_ > 0; }
  int pid() const { return pid_; }
  // `cgroup_dir` may be "". Tracked before the trial runs a single instruction;
  // root_pid 0 tracks a cgroup made before its trial's root is forked.
  void track(int root_pid, const std::string& trial_id, const std::string& cgroup_dir);
  void untrack(const std::string& trial_id);

 private:
  void send(const std::string& line);
  int fd_ = -1;
  int pid_ = -1;
  std::mutex mutex_;
};

// The watcher's side, exposed for the tests: ends every process of a trial (its
// session or process group, its cgroup, the processes whose environment carries
// HANGBENCH_TRIAL_ID=<trial_id>) with SIGKILL until none is left or `bound_s`
// passes, then removes its cgroup. Returns how many processes it signalled.
struct TrackedTrial {
  int root = -1;
  std::string trial_id;
  std::string cgroup_dir;
};
int end_tracked_trials(const std::vector<TrackedTrial>& trials, double bound_s);
// How long end_tracked_trials first lets the trials' own inits clean up (seconds).
inline constexpr double kInitCleanupGraceS = 0.3;

}  // namespace hangbench::exec_detail
