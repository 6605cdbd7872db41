// hb_test_grandchild_holder [--transport=unix|tcp] [--holder-ms=N]
// The shape of the NCCL teardown hang: the root opens a connection, forks a child
// that forks a grandchild and exits; the grandchild inherits the peer end and keeps
// it open. The root then waits for EOF on its end, which comes only when the
// grandchild is gone: the root hangs exactly as long as the grandchild lives
// (forever without --holder-ms). Evidence must name the grandchild as the holder.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "args.hpp"
#include "phase.hpp"

namespace {

// A connected TCP pair over loopback: {root end, peer end}.
bool tcp_pair(int fds[2]) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return false;
  }
  fds[0] = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(fds[0], reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return false;
  fds[1] = ::accept(listener, nullptr, nullptr);
  ::close(listener);
  return fds[1] >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace phase = hangbench::phase;
  std::string transport = hb_test::arg_string(argc, argv, "transport", "unix");
  long holder_ms = hb_test::arg_long(argc, argv, "holder-ms", -1);
  int fds[2];
  bool ok = transport == "tcp" ? tcp_pair(fds) : ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0;
  if (!ok) {
    std::perror("connection");
    return 2;
  }
  phase::mark("init_done");
  pid_t child = ::fork();
  if (child == 0) {
    if (::fork() == 0) {
      // Grandchild: holds the peer end (fds[1]) and nothing else of interest.
      ::close(fds[0]);
      phase::metric("holder_pid", static_cast<double>(::getpid()));
      if (holder_ms < 0) hb_test::block_forever();
      std::this_thread::sleep_for(std::chrono::milliseconds(holder_ms));
      ::_exit(0);
    }
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
  ::close(fds[1]);
  phase::mark("work_done");
  phase::mark("teardown_begin");
  // Waits for EOF: the peer end is still open in the grandchild.
  char buf[64];
  while (::read(fds[0], buf, sizeof buf) > 0) {
  }
  phase::mark("teardown_end");
  return 0;
}
