// hb_test_daemon: double-forks a daemon (new session, reparented away from the
// root) that sleeps forever, then exits 0. The harness must find and end it.
// The root exits only once the daemon has reported its pid, so the record of the
// trial always names the daemon. --then-hang: the root blocks forever instead.
#include <sys/wait.h>
#include <unistd.h>

#include "args.hpp"
#include "phase.hpp"

int main(int argc, char** argv) {
  hangbench::phase::mark("init_done");
  int ready[2];
  if (::pipe(ready) != 0) return 2;
  pid_t child = ::fork();
  if (child == 0) {
    ::setsid();  // leaves the trial's session and process group
    if (::fork() == 0) {
      hangbench::phase::metric("daemon_pid", static_cast<double>(::getpid()));
      ssize_t ignored = ::write(ready[1], "r", 1);
      (void)ignored;
      ::close(ready[0]);
      ::close(ready[1]);
      hb_test::block_forever();
    }
    ::_exit(0);
  }
  ::close(ready[1]);
  ::waitpid(child, nullptr, 0);
  char byte;
  ssize_t ignored = ::read(ready[0], &byte, 1);
  (void)ignored;
  if (hb_test::has_flag(argc, argv, "then-hang")) hb_test::block_forever();
  hangbench::phase::mark("teardown_begin");
  hangbench::phase::mark("teardown_end");
  return 0;
}
