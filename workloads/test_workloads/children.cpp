// hb_test_children [--count=N]: forks N children that block forever, then waits
// for them: a HANG whose cleanup must end N+1 processes.
#include <sys/wait.h>
#include <unistd.h>

#include "args.hpp"
#include "phase.hpp"

int main(int argc, char** argv) {
  long count = hb_test::arg_long(argc, argv, "count", 50);
  hangbench::phase::mark("init_done");
  for (long i = 0; i < count; ++i) {
    if (::fork() == 0) hb_test::block_forever();
  }
  hangbench::phase::metric("children", static_cast<double>(count));
  hangbench::phase::mark("teardown_begin");
  while (::wait(nullptr) > 0) {
  }
  hb_test::block_forever();
}
