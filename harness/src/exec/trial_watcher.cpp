#include "exec/trial_watcher.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "exec/cgroup.hpp"
#include "exec/proc_scan.hpp"
#include "hangbench/clock.hpp"

namespace hangbench::exec_detail {
namespace {

// Closes every descriptor but stdio and `keep`: the watcher must not hold the
// store, the output folder's lock or a trial's pipe open after the harness died.
void close_all_but(int keep) {
  if (keep > 3) ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
  ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
}

// "+ ROOT ID CGROUP" starts tracking a trial, "- ID" stops; CGROUP is "-" when none.
// ROOT is 0 while the trial's cgroup exists but its root is not forked yet.
void apply_line(const std::string& line, std::map<std::string, TrackedTrial>& tracked) {
  std::istringstream in(line);
  std::string op, id;
  in >> op;
  if (op == "+") {
    TrackedTrial t;
    in >> t.root >> t.trial_id;
    std::getline(in >> std::ws, t.cgroup_dir);
    if (t.cgroup_dir == "-") t.cgroup_dir.clear();
    if (t.root >= 0 && !t.trial_id.empty()) tracked[t.trial_id] = t;
  } else if (op == "-" && in >> id) {
    tracked.erase(id);
  }
}

[[noreturn]] void watcher_main(int fd) {
  ::setsid();  // out of the terminal's process group: Ctrl-C reaches the harness, not us
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) ::signal(sig, SIG_IGN);
  ::prctl(PR_SET_NAME, "hangbench-watch");
  if (::chdir("/") != 0) {
    // stays in the output folder; harmless
  }
  close_all_but(fd);
  // stderr stays for the closing message; stdin and stdout must not keep a reader waiting.
  int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    if (null_fd > 2) ::close(null_fd);
  }
  std::map<std::string, TrackedTrial> tracked;
  std::string buffer;
  char chunk[4096];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the harness is gone
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
      apply_line(buffer.substr(0, nl), tracked);
    }
  }
  if (!tracked.empty()) {
    std::vector<TrackedTrial> trials;
    for (auto& [id, t] : tracked) trials.push_back(t);
    int ended = end_tracked_trials(trials, 10.0);
    std::fprintf(stderr, "hangbench: watcher: the harness is gone; ended %d process(es) of %zu trial(s) in flight\n",
                 ended, trials.size());
  }
  ::_exit(0);
}

}  // namespace

int end_tracked_trials(const std::vector<TrackedTrial>& trials, double bound_s) {
  std::set<int> signalled;
  double deadline = monotonic_seconds() + bound_s;
  // Each trial's PID-namespace init ends its trial and removes its cgroup itself when the
  // harness dies (its death signal). Give them a moment first: a watcher killed with the
  // harness used to SIGKILL the inits and die before removing their groups, leaving empty
  // cgroups behind (the CI soak, 2026-12-04).
  const double grace_until = std::min(deadline, monotonic_seconds() + kInitCleanupGraceS);
  auto groups_left = [&trials] {
    return std::any_of(trials.begin(), trials.end(), [](const TrackedTrial& t) {
      return !t.cgroup_dir.empty() && ::access(t.cgroup_dir.c_str(), F_OK) == 0;
    });
  };
  while (monotonic_seconds() < grace_until && groups_left()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (;;) {
    bool any_left = false;
    for (const auto& t : trials) {
      std::set<int> in_cgroup;
      if (!t.cgroup_dir.empty()) in_cgroup = cgroup_pids(t.cgroup_dir);
      // Found before anything is signalled, so that the count says what was ended.
      auto procs =
          find_trial_processes(t.root > 0 ? t.root : -1, "HANGBENCH_TRIAL_ID=" + t.trial_id, {}, in_cgroup, true);
      if (t.root > 0) ::kill(-t.root, SIGKILL);  // the trial's process group, should a member hide from /proc
      for (int pid : procs.live) {
        ::kill(pid, SIGKILL);
        signalled.insert(pid);
      }
      if (!in_cgroup.empty()) kill_cgroup(t.cgroup_dir);
      signalled.insert(in_cgroup.begin(), in_cgroup.end());
      any_left = any_left || !procs.live.empty();
    }
    if (!any_left || monotonic_seconds() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const auto& t : trials) {
    if (!t.cgroup_dir.empty()) remove_cgroup(t.cgroup_dir, std::max(0.5, deadline - monotonic_seconds()));
  }
  return static_cast<int>(signalled.size());
}

TrialWatcher::TrialWatcher() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    watcher_main(fds[1]);
  }
  ::close(fds[1]);
  fd_ = fds[0];
  pid_ = pid;
}

TrialWatcher::~TrialWatcher() {
  if (fd_ >= 0) ::close(fd_);
  if (pid_ > 0) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

void TrialWatcher::send(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return;
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the watcher is gone: the per-trial cleanup still runs
    done += static_cast<size_t>(n);
  }
}

void TrialWatcher::track(int root_pid, const std::string& trial_id, const std::string& cgroup_dir) {
  send("+ " + std::to_string(root_pid) + " " + trial_id + " " + (cgroup_dir.empty() ? "-" : cgroup_dir) + "\n");
}

void TrialWatcher::untrack(const std::string& trial_id) { send("- " + trial_id + "\n"); }

}  // namespace hangbench::exec_detail
