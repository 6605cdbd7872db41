// hb_test_daemon: double-forks a daemon (new session, reparented away from the
// root) that sleeps forever, then exits 0. The harness must find and end it.
#include <sys/wait.h>
#include <unistd.h>

#include "args.hpp"
#include "phase.hpp"

int main() {
  hangbench::phase::mark("init_done");
  pid_t child = ::fork();
  if (child == 0) {
    ::setsid();   // leaves the trial's session and process group
    if (::fork() == 0) {
      hangbench::phase::metric("daemon_pid", static_cast<double>(::getpid()));
      hb_test::block_forever();
    }
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
  hangbench::phase::mark("teardown_begin");
  hangbench::phase::mark("teardown_end");
  return 0;
}
