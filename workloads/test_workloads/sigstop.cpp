// hb_test_sigstop: stops itself with SIGSTOP; a stopped trial is a hang.
#include <csignal>

#include "phase.hpp"

int main() {
  hangbench::phase::mark("init_done");
  std::raise(SIGSTOP);
  hangbench::phase::mark("work_done");  // reached only if someone sends SIGCONT
  return 0;
}
