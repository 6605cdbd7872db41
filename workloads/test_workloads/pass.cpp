// hb_test_pass [--ms=N] [--garbage-line] [--garbage-lines=N]: reports the four
// phases, works N ms, exits 0. --garbage-line also writes a malformed line to the
// phase file, --garbage-lines=N that many (the harness must warn once and carry on).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "args.hpp"
#include "phase.hpp"

int main(int argc, char** argv) {
  namespace phase = hangbench::phase;
  phase::mark("init_done");
  std::this_thread::sleep_for(std::chrono::milliseconds(hb_test::arg_long(argc, argv, "ms", 10)));
  phase::mark("work_done");
  phase::metric("steps", 3.0);
  long garbage = hb_test::arg_long(argc, argv, "garbage-lines", hb_test::has_flag(argc, argv, "garbage-line") ? 1 : 0);
  if (const char* path = std::getenv("HANGBENCH_PHASE_FILE"); path && garbage > 0) {
    int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    for (long i = 0; i < garbage; ++i) {
      ssize_t ignored = ::write(fd, "{not json\n", 10);
      (void)ignored;
    }
    ::close(fd);
  }
  phase::mark("teardown_begin");
  phase::mark("teardown_end");
  return 0;
}
