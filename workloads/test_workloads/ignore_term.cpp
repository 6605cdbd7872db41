// hb_test_ignore_term: ignores SIGTERM and hangs; only SIGKILL ends it.
#include <csignal>

#include "args.hpp"
#include "phase.hpp"

int main() {
  std::signal(SIGTERM, SIG_IGN);
  hangbench::phase::mark("init_done");
  hb_test::block_forever();
}
