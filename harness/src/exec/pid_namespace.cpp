#include "exec/pid_namespace.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hangbench::exec_detail {
namespace {

const NamespaceInitPlan* g_plan = nullptr;  // the init's own copy-on-write memory
volatile sig_atomic_t g_ending = 0;

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write_all(fd, text, std::strlen(text));
  ::close(fd);
  return ok;
}

// Back into the harness's cgroup, and the trial's group removed: done by the init
// itself, so that no group outlives the trial whoever dies when.
void leave_and_remove_cgroup() {
  if (!g_plan || !g_plan->cgroup_dir) return;
  write_file(g_plan->parent_procs, "0");
  for (int i = 0; i < 500; ++i) {  // members that are exiting leave it within ms; 5 s bound
    if (::rmdir(g_plan->cgroup_dir) == 0 || errno == ENOENT) break;
    sleep_ms(10);
  }
}

// The harness is gone: end every process of the namespace, reap them, leave the
// trial's cgroup and remove it, exit. In a signal handler: async-signal-safe only.
[[noreturn]] void end_namespace() {
  g_ending = 1;
  // From pid 1, kill(-1) reaches every other process of the namespace, but not
  // one forked while it ran: again until none is left to reap (a bound, not a
  // wait: the group cannot be removed while any member lives).
  for (int waited_ms = 0; waited_ms < 10000;) {
    ::kill(-1, SIGKILL);
    pid_t r = ::waitpid(-1, nullptr, WNOHANG);
    if (r > 0) continue;
    if (r < 0 && errno == ECHILD) break;
    sleep_ms(5);
    waited_ms += 5;
  }
  leave_and_remove_cgroup();
  ::_exit(128 + SIGKILL);
}

void on_harness_gone(int) { end_namespace(); }

// SIGTERM and the like from the harness reach every process of the namespace, as
// they would reach the trial's process group without one.
void on_forwarded(int sig) {
  if (!g_ending) ::kill(-1, sig);
}

// Closes every descriptor above stdio but those in `keep` (ascending, -1 skipped).
void close_all_but(const int* keep, int n) {
  unsigned lo = 3;
  for (int i = 0; i < n; ++i) {
    if (keep[i] < static_cast<int>(lo)) continue;
    if (static_cast<unsigned>(keep[i]) > lo) ::close_range(lo, static_cast<unsigned>(keep[i]) - 1, 0);
    lo = static_cast<unsigned>(keep[i]) + 1;
  }
  ::close_range(lo, ~0U, 0);
}

void sort_fds(int* a, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (a[j] < a[i]) {
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
      }
}

// The host's /proc, opened by the init before it mounts the namespace's own:
// through it, "self" still names a process as the host sees it.
int g_host_proc_fd = -1;

// Our host pid, read through the host's /proc: the /proc mounted here names us
// by our pid in the namespace, and a namespace pid taken for a host pid made one
// trial's cleanup end another trial's process (2026-12-03).
int host_pid() {
  char buf[32];
  ssize_t n = g_host_proc_fd >= 0 ? ::readlinkat(g_host_proc_fd, "self", buf, sizeof buf - 1) : -1;
  if (n <= 0) return -1;
  int pid = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] < '0' || buf[i] > '9') return -1;
    pid = pid * 10 + (buf[i] - '0');
  }
  return pid;
}

const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};

[[noreturn]] void run_workload(const NamespaceInitPlan& plan) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : kForwarded) ::sigaction(sig, &dfl, nullptr);
  ::sigaction(plan.harness_gone_signal, &dfl, nullptr);
  for (int sig : {SIGPIPE, SIGCHLD}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int pids[2] = {host_pid(), static_cast<int>(::getpid())};  // host's and the namespace's
  write_all(plan.info_fd, pids, sizeof pids);
  ::execve(plan.exe, plan.argv, plan.envp);
  int err = errno;
  write_all(plan.error_fd, &err, sizeof err);
  ::_exit(127);
}

// Sets ns_last_pid of this (the new) pid namespace: the workload forked next gets
// base + 1. Needs CAP_SYS_ADMIN; without it the pids start from 2.
void set_namespace_pid_base(long base) {
  if (base <= 0) return;
  char text[32];
  const int len = std::snprintf(text, sizeof text, "%ld", base);
  if (int fd = ::open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC); fd >= 0) {
    write_all(fd, text, static_cast<size_t>(len));
    ::close(fd);
  }
}

}  // namespace

// /proc of the trial's own PID namespace, in a mount namespace of its own (nothing
// else of the file system changes). A program that reads /proc by the pids it sees
// must find itself there: with the machine's /proc, CUDA's driver fails in
// cudaGetDeviceCount with error 304 (OS call failed) inside the namespace (H200,
// driver 580, 2026-12-03). Private first, so that the mount stays ours.
bool mount_namespace_proc() {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  return ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
}

long raw_fork(unsigned long flags) { return ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, 0); }

bool pid_namespaces_available() {
  static const bool available = [] {
    if (const char* off = std::getenv("HANGBENCH_NO_PIDNS"); off && *off && std::strcmp(off, "0") != 0) return false;
    long pid = raw_fork(kNamespaceCloneFlags);
    if (pid == 0) ::_exit(mount_namespace_proc() ? 0 : 1);
    if (pid < 0) return false;
    int status = 0;
    while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return available;
}

// Every trial's namespace numbers its processes from 1, so trials in flight together
// would run programs with equal pids, and launchers name shared things after their
// pid (Open MPI's job id, session folder and shared-memory segments: two mpirun
// trials at once trampled each other's). Blocks of 512 pids, in turn.
long next_namespace_pid_base() {
  static std::atomic<long> trials{0};
  long pid_max = 32768;
  if (FILE* f = std::fopen("/proc/sys/kernel/pid_max", "re")) {
    if (std::fscanf(f, "%ld", &pid_max) != 1) pid_max = 32768;
    std::fclose(f);
  }
  const long blocks = pid_max / 512 - 1;
  if (blocks < 2) return 0;
  return 100 + (trials.fetch_add(1) % blocks) * 512;
}

int namespace_end_signal() { return SIGRTMIN + 2; }

std::string trial_isolation_mode() { return pid_namespaces_available() ? "pid-namespace" : "watcher"; }

void namespace_init_main(const NamespaceInitPlan& plan) {
  g_plan = &plan;
  ::setsid();  // its own session and process group, as a trial's root has
  ::prctl(PR_SET_NAME, "hangbench-init");
  g_host_proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (!mount_namespace_proc()) ::_exit(127);  // the probe saw it work: the machine changed
  struct sigaction gone {};
  gone.sa_handler = on_harness_gone;
  sigfillset(&gone.sa_mask);
  ::sigaction(plan.harness_gone_signal, &gone, nullptr);
  struct sigaction forward {};
  forward.sa_handler = on_forwarded;
  sigemptyset(&forward.sa_mask);
  for (int sig : kForwarded) ::sigaction(sig, &forward, nullptr);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) ::sigaction(sig, &ign, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, plan.harness_gone_signal);

  if (::dup2(plan.stdin_fd, 0) < 0 || ::dup2(plan.stdout_fd, 1) < 0 || ::dup2(plan.stderr_fd, 2) < 0) ::_exit(127);
  int keep[5] = {plan.go_fd, plan.error_fd, plan.status_fd, plan.info_fd, g_host_proc_fd};
  sort_fds(keep, 5);
  close_all_but(keep, 5);

  // Into the trial's cgroup before anything of the workload runs.
  int in_cgroup = 0;
  if (plan.cgroup_dir && ::mkdir(plan.cgroup_dir, 0755) == 0) in_cgroup = write_file(plan.cgroup_procs, "0") ? 1 : 0;
  if (plan.cgroup_dir && !in_cgroup) {
    ::rmdir(plan.cgroup_dir);
    g_plan = nullptr;  // nothing of ours to remove at the end
  }
  write_all(plan.info_fd, &in_cgroup, sizeof in_cgroup);
  // The go: the harness has told its watcher. EOF: it died before (the death
  // signal may have come before we asked for it).
  char go = 0;
  ssize_t n;
  do {
    n = ::read(plan.go_fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) end_namespace();
  ::close(plan.go_fd);

  set_namespace_pid_base(plan.pid_base);
  long workload = raw_fork(0);
  if (workload == 0) run_workload(plan);
  ::close(plan.error_fd);
  ::close(plan.info_fd);
  if (workload < 0) {
    int err = errno;
    (void)err;
    ::_exit(127);
  }
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(-1, &status, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: the workload and everything it left have ended
    }
    if (r == workload) write_all(plan.status_fd, &status, sizeof status);
  }
  leave_and_remove_cgroup();
  ::_exit(0);
}

}  // namespace hangbench::exec_detail
