// hb_test_exit3: exits with status 3 after init_done (a FAILED trial).
#include "phase.hpp"

int main() {
  hangbench::phase::mark("init_done");
  return 3;
}
