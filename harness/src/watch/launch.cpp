// Starting the job (its own process group, its output through a relay that
// outlives a killed watcher), the clock that forwards signals to it, and ending
// its whole tree the way `run` ends a trial: SIGTERM and SIGCONT, a grace,
// SIGKILL to whatever is left, listed again each round.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "hangbench/clock.hpp"
#include "hangbench/proc.hpp"
#include "hangbench/watch.hpp"

namespace hangbench::watch {

namespace {

const int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// Writes all of buf to fd (a relay's write may be partial; EINTR retried).
void write_all(int fd, const char* buf, ssize_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, buf, static_cast<size_t>(n));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // our stdout is gone: keep draining the pipe so the job never blocks
    buf += w;
    n -= w;
  }
}

// The relay: copies the job's stdout and stderr to ours and counts the bytes in a
// shared page, until the job's last writer closes. It ignores the signals that end
// a watcher, so the job keeps somewhere to write whatever happens to the watcher.
[[noreturn]] void relay(int out_fd, int err_fd, unsigned long long* counter) {
  for (int sig : kForwarded) ::signal(sig, SIG_IGN);
  ::prctl(PR_SET_NAME, "hangbench-relay", 0, 0, 0);
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  OutputProgress progress[2];  // per stream: lines of stdout and stderr interleave
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      if (auto counted = progress[i].add(std::string_view(buf, static_cast<std::size_t>(n))))
        __atomic_add_fetch(counter, counted, __ATOMIC_RELAXED);
      write_all(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, n);
    }
  }
  ::_exit(0);
}

std::string default_phase_file(const std::string& dir) {
  return dir + "/hangbench-watch-" + std::to_string(::getpid()) + "-phases.jsonl";
}

}  // namespace

Launch launch_job(const std::vector<std::string>& argv, bool owned, const std::string& phase_dir) {
  Launch l;
  if (argv.empty()) {
    l.error = "no command after --";
    return l;
  }
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    l.error = std::string("mmap: ") + std::strerror(errno);
    return l;
  }
  auto* counter = static_cast<unsigned long long*>(page);
  l.output_counter = counter;
  const char* given = std::getenv("HANGBENCH_PHASE_FILE");
  l.phase_file = given && *given ? given : default_phase_file(phase_dir);
  int out[2], err[2], status[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0) {
    l.error = std::string("pipe: ") + std::strerror(errno);
    return l;
  }
  l.relay_pid = ::fork();
  if (l.relay_pid == 0) {
    ::close(out[1]);
    ::close(err[1]);
    ::close(status[0]);
    ::close(status[1]);
    relay(out[0], err[0], counter);
  }
  ::close(out[0]);
  ::close(err[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string phase_env = "HANGBENCH_PHASE_FILE=" + l.phase_file;
  const pid_t parent = ::getpid();
  l.pid = ::fork();
  if (l.pid == 0) {
    ::setpgid(0, 0);
    if (owned) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      if (::getppid() != parent) ::_exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::putenv(const_cast<char*>(phase_env.c_str()));
    ::execvp(args[0], args.data());
    int e = errno;
    [[maybe_unused]] auto n = ::write(status[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  ::close(status[1]);
  if (l.pid < 0) {
    l.error = std::string("fork: ") + std::strerror(errno);
    ::close(status[0]);
    return l;
  }
  ::setpgid(l.pid, l.pid);  // also here: no moment when a signal to the group misses it
  int e = 0;
  ssize_t n;
  do n = ::read(status[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::close(status[0]);
  if (n == sizeof e) {
    l.error = "cannot start " + argv[0] + ": " + std::strerror(e);
    int st;
    ::waitpid(l.pid, &st, 0);
    l.pid = -1;
  }
  return l;
}

// ---- the clock -------------------------------------------------------------------------
SystemClock::SystemClock(int forward_to_group) : group_(forward_to_group) {
  if (group_ <= 0) return;
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kForwarded) sigaddset(&set, sig);
  sigaddset(&set, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
}

double SystemClock::now() { return monotonic_seconds(); }

double SystemClock::unix_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void SystemClock::sleep_until(double t) {
  for (;;) {
    const double left = t - now();
    if (left <= 0) return;
    if (group_ <= 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(left));
      continue;
    }
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kForwarded) sigaddset(&set, sig);
    sigaddset(&set, SIGCHLD);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(left);
    ts.tv_nsec = static_cast<long>((left - std::floor(left)) * 1e9);
    const int sig = ::sigtimedwait(&set, nullptr, &ts);
    if (sig == SIGCHLD) return;  // a child ended: the loop looks at once
    if (sig > 0) ::kill(-group_, sig);
  }
}

// ---- ending the tree ---------------------------------------------------------------------
namespace {

// Every live process of the job: the tree under the root, its process group, the
// processes known earlier, and the orphans it left to this watcher (a subreaper).
std::set<int> job_processes(const std::string& proc_root, int root, const std::set<int>& known, int spare) {
  const int self = ::getpid();
  std::map<int, proc::StatFields> stats;
  std::multimap<int, int> children;
  for (int pid : proc::list_pids(proc_root)) {
    auto text = proc::read_text(proc_root + "/" + std::to_string(pid) + "/stat");
    if (!text) continue;
    if (auto s = proc::parse_stat(*text)) {
      stats[pid] = *s;
      children.emplace(s->ppid, pid);
    }
  }
  std::set<int> out;
  std::vector<int> queue;
  for (const auto& [pid, s] : stats) {
    const bool orphan = s.ppid == self && pid != root && pid != spare;
    if (pid == root || s.pgid == root || known.count(pid) || orphan) queue.push_back(pid);
  }
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const int pid = queue[i];
    if (pid == self || pid == spare || !out.insert(pid).second) continue;
    auto [lo, hi] = children.equal_range(pid);
    for (auto it = lo; it != hi; ++it) queue.push_back(it->second);
  }
  for (auto it = out.begin(); it != out.end();) {
    const char state = stats[*it].state;
    if (state == 'Z' || state == 'X') {
      if (stats[*it].ppid == self && *it != root) ::waitpid(*it, nullptr, WNOHANG);  // an orphan we reap
      it = out.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

bool wait_until_gone(const std::string& proc_root, int root, const std::set<int>& known, int spare, double bound_s) {
  const double until = monotonic_seconds() + bound_s;
  for (;;) {
    if (job_processes(proc_root, root, known, spare).empty()) return true;
    if (monotonic_seconds() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

bool end_process_tree(const std::string& proc_root, int root_pid, const std::vector<int>& known_pids, double grace_s,
                      int spare) {
  const std::set<int> known(known_pids.begin(), known_pids.end());
  for (int pid : job_processes(proc_root, root_pid, known, spare)) {
    ::kill(pid, SIGTERM);
    ::kill(pid, SIGCONT);
  }
  ::kill(-root_pid, SIGTERM);
  ::kill(-root_pid, SIGCONT);
  if (wait_until_gone(proc_root, root_pid, known, spare, grace_s)) return true;
  for (int round = 0; round < 50; ++round) {
    ::kill(-root_pid, SIGKILL);
    for (int pid : job_processes(proc_root, root_pid, known, spare)) ::kill(pid, SIGKILL);
    if (wait_until_gone(proc_root, root_pid, known, spare, 0.2)) return true;
  }
  return false;
}

}  // namespace hangbench::watch
