#include "exec/spawn.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "exec/cgroup.hpp"
#include "exec/pid_namespace.hpp"
#include "hangbench/paths.hpp"

namespace hangbench::exec_detail {
namespace {

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Closes every descriptor above stdio but `a` and `b` (another trial's pipes
// inherited from a concurrent fork, the store, the folder lock, the watcher's socket).
void close_all_but(int a, int b) {
  if (a > b) std::swap(a, b);
  unsigned lo = 3;
  for (int keep : {a, b}) {
    if (keep >= static_cast<int>(lo)) {
      if (static_cast<unsigned>(keep) > lo) ::close_range(lo, static_cast<unsigned>(keep) - 1, 0);
      lo = static_cast<unsigned>(keep) + 1;
    }
  }
  ::close_range(lo, ~0U, 0);
}

[[noreturn]] void child_fail(int error_fd, int err) {
  ssize_t ignored = ::write(error_fd, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

bool read_int(int fd, int& value) {
  for (;;) {
    ssize_t n = ::read(fd, &value, sizeof value);
    if (n < 0 && errno == EINTR) continue;
    return n == sizeof value;
  }
}

// The trial as pid 2 of its own PID namespace under an init (pid_namespace.hpp).
SpawnResult spawn_in_namespace(const SpawnRequest& request, const std::string& exe, std::vector<char*>& argv,
                               std::vector<char*>& envp, int in_fd, int out_fd, int err_fd) {
  SpawnResult result;
  result.pid_namespace = true;
  int go[2], error[2], status[2], info[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return {-1, false, std::string("pipe: ") + std::strerror(errno)};
  Fd go_read{go[0]}, go_write{go[1]};
  if (::pipe2(error, O_CLOEXEC) != 0) return {-1, false, std::string("pipe: ") + std::strerror(errno)};
  Fd error_read{error[0]}, error_write{error[1]};
  if (::pipe2(status, O_CLOEXEC) != 0) return {-1, false, std::string("pipe: ") + std::strerror(errno)};
  Fd status_read{status[0]}, status_write{status[1]};
  if (::pipe2(info, O_CLOEXEC) != 0) return {-1, false, std::string("pipe: ") + std::strerror(errno)};
  Fd info_read{info[0]}, info_write{info[1]};

  const bool want_cgroup = request.cgroup && !request.cgroup->planned().empty();
  const std::string procs = want_cgroup ? request.cgroup->planned() + "/cgroup.procs" : "";
  const std::string parent_procs = want_cgroup ? request.cgroup->root() + "/cgroup.procs" : "";
  NamespaceInitPlan plan;
  plan.go_fd = go_read.fd;
  plan.error_fd = error_write.fd;
  plan.status_fd = status_write.fd;
  plan.info_fd = info_write.fd;
  plan.exe = exe.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cgroup_dir = want_cgroup ? request.cgroup->planned().c_str() : nullptr;
  plan.cgroup_procs = procs.c_str();
  plan.parent_procs = parent_procs.c_str();
  plan.harness_gone_signal = namespace_end_signal();
  plan.stdin_fd = in_fd;
  plan.stdout_fd = out_fd;
  plan.stderr_fd = err_fd;
  plan.pid_base = next_namespace_pid_base();

  long pid = raw_fork(kNamespaceCloneFlags);
  if (pid < 0) return {-1, false, std::string("clone(CLONE_NEWPID | CLONE_NEWNS): ") + std::strerror(errno)};
  if (pid == 0) namespace_init_main(plan);
  go_read.reset();
  error_write.reset();
  status_write.reset();
  info_write.reset();
  auto failed = [&](const std::string& why) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    while (::waitpid(static_cast<pid_t>(pid), nullptr, 0) < 0 && errno == EINTR) {
    }
    result.pid = -1;
    result.error = why;
    return result;
  };
  int in_cgroup = 0;
  if (!read_int(info_read.fd, in_cgroup))
    return failed("cannot start '" + request.argv[0] + "': its init ended at once");
  result.pid = static_cast<int>(pid);
  result.in_cgroup = in_cgroup == 1;
  if (request.before_start) request.before_start(result.pid);
  char go_byte = 1;
  ssize_t ignored = ::write(go_write.fd, &go_byte, 1);
  (void)ignored;
  go_write.reset();
  int workload = -1, workload_in_namespace = -1;
  if (read_int(info_read.fd, workload)) result.workload_pid = workload;
  if (read_int(info_read.fd, workload_in_namespace)) result.workload_namespace_pid = workload_in_namespace;
  int child_errno = 0;
  if (read_int(error_read.fd, child_errno)) {
    return failed("cannot start '" + request.argv[0] + "': " + std::strerror(child_errno));
  }
  ::fcntl(status_read.fd, F_SETFL, O_NONBLOCK);
  result.status_fd = status_read.fd;
  status_read.fd = -1;  // the caller's now
  return result;
}

}  // namespace

// A path is kept as given (exec reports why it cannot run); a bare name is looked up.
std::string resolve_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  return find_executable(name);
}

SpawnResult spawn_trial_process(const SpawnRequest& request) {
  SpawnResult result;
  std::string exe = resolve_executable(request.argv.empty() ? "" : request.argv[0]);
  if (exe.empty()) {
    result.error =
        "cannot start '" + (request.argv.empty() ? std::string() : request.argv[0]) + "': command not found on PATH";
    return result;
  }
  // Everything the child needs is prepared before fork: no allocation after it.
  std::vector<char*> argv, envp;
  for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  Fd in{::open("/dev/null", O_RDONLY | O_CLOEXEC)};
  Fd out{::open(request.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  Fd err{::open(request.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (in.fd < 0 || out.fd < 0 || err.fd < 0) {
    result.error = std::string("cannot open the trial's stdio files: ") + std::strerror(errno);
    return result;
  }
  if (request.pid_namespace) return spawn_in_namespace(request, exe, argv, envp, in.fd, out.fd, err.fd);
  int go_pipe[2], error_pipe[2];
  if (::pipe2(go_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  Fd go_read{go_pipe[0]}, go_write{go_pipe[1]};
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  Fd error_read{error_pipe[0]}, error_write{error_pipe[1]};

  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    // Child: a new session makes it the leader of its own process group too.
    ::setsid();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(sig, SIG_DFL);
    if (::dup2(in.fd, 0) < 0 || ::dup2(out.fd, 1) < 0 || ::dup2(err.fd, 2) < 0) child_fail(error_write.fd, errno);
    close_all_but(go_read.fd, error_write.fd);
    // Should the harness die before the go, so do we (the watcher may not know us yet).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Wait until the parent has put us into the cgroup and told the watcher.
    char go = 0;
    if (::read(go_read.fd, &go, 1) != 1) ::_exit(127);
    ::prctl(PR_SET_PDEATHSIG, 0);
    ::execve(exe.c_str(), argv.data(), envp.data());
    child_fail(error_write.fd, errno);
  }
  result.pid = pid;
  if (request.cgroup && request.cgroup->ok()) result.in_cgroup = request.cgroup->add(pid);
  if (request.before_start) request.before_start(pid);
  char go = 1;
  ssize_t ignored = ::write(go_write.fd, &go, 1);
  (void)ignored;
  go_write.reset();
  error_write.reset();
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(error_read.fd, &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof child_errno) {
    ::waitpid(pid, nullptr, 0);
    result.pid = -1;
    result.error = "cannot start '" + request.argv[0] + "': " + std::strerror(child_errno);
  }
  return result;
}

}  // namespace hangbench::exec_detail
