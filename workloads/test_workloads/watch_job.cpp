// hb_test_watch_job: a job for `hangbench watch`'s tests.
//   --mode=progress --every-ms=N --for-ms=M   a phase line and an output line every N ms for M ms, then exit 0
//   --mode=pipe                               blocks forever reading a pipe whose write end it holds itself
//   --mode=deadlock                           two threads, two mutexes taken in opposite orders
//   --mode=signal --signal=S                  kills itself with signal S
//   --exit=C                                  the exit code of --mode=progress (default 0)
//   --watchdog-ms=W                           its own watchdog: after W ms, "watchdog: timeout" and exit 6
//                                             (as PyTorch's NCCL watchdog ends a hung rank)
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "args.hpp"
#include "phase.hpp"

namespace {

void progress(long every_ms, long for_ms) {
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0;; ++step) {
    hangbench::phase::mark("step");
    std::printf("step %d\n", step);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
    if (std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(for_ms)) return;
  }
}

[[noreturn]] void block_on_own_pipe() {
  int fds[2];
  if (::pipe(fds) != 0) std::_Exit(3);
  char c;
  for (;;) [[maybe_unused]] auto n = ::read(fds[0], &c, 1);
}

[[noreturn]] void deadlock() {
  static std::mutex a, b;
  std::thread t([] {
    std::lock_guard<std::mutex> hold_b(b);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::lock_guard<std::mutex> want_a(a);
  });
  {
    std::lock_guard<std::mutex> hold_a(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::lock_guard<std::mutex> want_b(b);
  }
  t.join();
  std::_Exit(0);  // never reached
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = hb_test::arg_string(argc, argv, "mode", "progress");
  if (const long w = hb_test::arg_long(argc, argv, "watchdog-ms", 0); w > 0) {
    std::thread([w] {
      std::this_thread::sleep_for(std::chrono::milliseconds(w));
      std::fprintf(stderr, "watchdog: timeout\n");
      std::_Exit(6);
    }).detach();
  }
  hangbench::phase::mark("init_done");
  std::printf("mode %s\n", mode.c_str());
  std::fflush(stdout);
  if (mode == "pipe") block_on_own_pipe();
  if (mode == "deadlock") deadlock();
  if (mode == "signal") {
    ::raise(static_cast<int>(hb_test::arg_long(argc, argv, "signal", SIGTERM)));
    return 0;
  }
  progress(hb_test::arg_long(argc, argv, "every-ms", 1000), hb_test::arg_long(argc, argv, "for-ms", 5000));
  return static_cast<int>(hb_test::arg_long(argc, argv, "exit", 0));
}
