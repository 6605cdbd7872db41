// hb_test_hang: reports init_done and teardown_begin, then blocks forever.
#include "args.hpp"
#include "phase.hpp"

int main() {
  hangbench::phase::mark("init_done");
  hangbench::phase::mark("teardown_begin");
  hb_test::block_forever();
}
