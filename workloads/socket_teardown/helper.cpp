#include "helper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <string>
#include <system_error>
#include <vector>

#include "phase.hpp"

namespace socket_teardown {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Closes every descriptor from 3 up except `keep` (the readiness pipe).
void close_all_but(int keep) {
  if (keep > 3) syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(keep + 1), UINT_MAX, 0u);
}

std::string own_executable() {
  std::vector<char> buf(PATH_MAX + 1, '\0');
  ssize_t n = ::readlink("/proc/self/exe", buf.data(), PATH_MAX);
  if (n <= 0) throw_errno("readlink /proc/self/exe");
  return std::string(buf.data(), static_cast<size_t>(n));
}

}  // namespace

void run_helper(pid_t parent, double lifetime_s, int ready_fd) {
  // Like a DataLoader worker: die with the parent (the signal), and notice an
  // already-missed parent death (the getppid() watch).
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(0);
  char ready = 'r';
  if (::write(ready_fd, &ready, 1) != 1) _exit(1);
  ::close(ready_fd);
  const double start = monotonic_seconds();
  const timespec tick{0, 50 * 1000 * 1000};
  for (;;) {
    nanosleep(&tick, nullptr);
    if (getppid() != parent) _exit(0);
    if (lifetime_s > 0 && monotonic_seconds() - start >= lifetime_s) {
      hangbench::phase::mark("helper_exit");
      _exit(0);
    }
  }
}

pid_t spawn_helper(const HelperOptions& options) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw_errno("pipe2");
  const pid_t parent = getpid();
  // Everything the child needs is prepared before fork: the rank may be threaded.
  std::vector<std::string> exec_args;
  if (options.start == HelperStart::ForkExec) {
    exec_args = {own_executable(), kRunHelperFlag, "--parent-pid=" + std::to_string(parent),
                 "--helper-lifetime=" + std::to_string(options.lifetime_s), "--ready-fd=" + std::to_string(ready[1])};
  }
  std::vector<char*> exec_argv;
  for (auto& a : exec_args) exec_argv.push_back(a.data());
  exec_argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    ::close(ready[0]);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    switch (options.start) {
      case HelperStart::Fork:
        break;
      case HelperStart::ForkCloseRange:
        close_all_but(ready[1]);
        break;
      case HelperStart::ForkExec:
        ::fcntl(ready[1], F_SETFD, 0);  // the readiness pipe must survive exec
        ::execv(exec_argv[0], exec_argv.data());
        _exit(127);
    }
    run_helper(parent, options.lifetime_s, ready[1]);
  }
  ::close(ready[1]);
  char ack = 0;
  ssize_t n;
  do {
    n = ::read(ready[0], &ack, 1);
  } while (n < 0 && errno == EINTR);
  ::close(ready[0]);
  if (n != 1) throw std::system_error(ECHILD, std::generic_category(), "helper did not start");
  return pid;
}

}  // namespace socket_teardown
