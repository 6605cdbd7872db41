// hb_test_segv: crashes with SIGSEGV after init_done.
#include <csignal>

#include "phase.hpp"

int main() {
  hangbench::phase::mark("init_done");
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  return 0;
}
