// hb_test_flood [--mb=N]: writes N MB to stdout and as much to stderr, exits 0.
#include <unistd.h>

#include <string>

#include "args.hpp"
#include "phase.hpp"

namespace {

bool write_all(int fd, const std::string& block, long blocks) {
  for (long i = 0; i < blocks; ++i) {
    for (size_t done = 0; done < block.size();) {
      ssize_t n = ::write(fd, block.data() + done, block.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long mb = hb_test::arg_long(argc, argv, "mb", 50);
  hangbench::phase::mark("init_done");
  std::string block(1 << 20, 'x');
  block.back() = '\n';
  bool ok = write_all(1, block, mb) && write_all(2, block, mb);
  hangbench::phase::mark("teardown_begin");
  hangbench::phase::mark("teardown_end");
  return ok ? 0 : 1;
}
