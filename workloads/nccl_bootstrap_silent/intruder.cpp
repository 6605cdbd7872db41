#include "intruder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

namespace hangbench::nccl_bootstrap_silent {
namespace {

// What the child tells its parent through the ready pipe.
constexpr char kConnected = 'c';
constexpr char kFailed = 'f';

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The child: only async-signal-safe calls (its parent has NCCL's threads running).
[[noreturn]] void be_intruder(const RootAddress& root, IntruderMode mode, int ready) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::prctl(PR_SET_NAME, "hb-intruder");
  // A foreign process holds none of the job's descriptors: keep 0-2 and the ready pipe.
  for (int fd = 3; fd < 1024; ++fd)
    if (fd != ready) ::close(fd);
  const int sock = ::socket(root.storage.ss_family, SOCK_STREAM, 0);
  const bool connected =
      sock >= 0 && ::connect(sock, reinterpret_cast<const sockaddr*>(&root.storage), root.length) == 0;
  if (!connected) {
    write_all(ready, &kFailed, 1);
    ::_exit(1);
  }
  if (mode == IntruderMode::Closed) {
    ::close(sock);
    write_all(ready, &kConnected, 1);
    ::_exit(0);
  }
  if (mode == IntruderMode::WrongMagic) {
    const char not_the_magic[8] = {'h', 'a', 'n', 'g', 'b', 'e', 'n', 'c'};
    write_all(sock, not_the_magic, sizeof not_the_magic);
  }
  write_all(ready, &kConnected, 1);
  ::close(ready);
  for (;;) ::pause();  // holds the connection, says nothing, until its parent is gone
}

}  // namespace

pid_t start_intruder(const RootAddress& root, IntruderMode mode) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw std::runtime_error("could not open the intruder's pipe");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("could not fork the intruder");
  if (pid == 0) be_intruder(root, mode, ready[1]);
  ::close(ready[1]);
  char said = kFailed;
  ssize_t got = 0;
  do {
    got = ::read(ready[0], &said, 1);
  } while (got < 0 && errno == EINTR);
  ::close(ready[0]);
  if (got != 1 || said != kConnected) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error("the intruder could not connect to the bootstrap root at " + root.text);
  }
  if (mode == IntruderMode::Closed) ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace hangbench::nccl_bootstrap_silent
