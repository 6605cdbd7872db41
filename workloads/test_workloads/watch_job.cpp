// hb_test_watch_job: a job for `hangbench watch`'s tests.
//   --mode=progress --every-ms=N --for-ms=M   a phase line and an output line every N ms for M ms, then exit 0
//   --mode=pipe                               blocks forever reading a pipe whose write end it holds itself
//   --mode=deadlock                           two threads, two mutexes taken in opposite orders
//   --mode=signal --signal=S                  kills itself with signal S
//   --mode=fr --every-ms=N --for-ms=M         PyTorch's Flight Recorder as watch sees it: it keeps the dump pipe
//                                             <TORCH_NCCL_DEBUG_INFO_PIPE_FILE><rank>.pipe and for each byte read
//                                             there writes a dump <TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank> (a
//                                             pickle) whose last completed collective advances every N ms until
//                                             M ms, then never (a hang inside a collective); nothing else moves
//   --mode=spin                               one thread spinning on the CPU for ever, no phase line and no
//                                             output after its first line (a collective spinning in its proxy
//                                             thread, as watch sees it from outside)
//   --mode=fr-silent                          a rank whose Flight Recorder never dumps (on a GPU: the GIL held in
//                                             a native call) while a thread spins: it keeps the dump pipe, and
//                                             for each request logs PyTorch's "preparing to dump debug info"
//                                             line to stderr and writes no dump
//   --exit=C                                  the exit code of --mode=progress (default 0)
//   --watchdog-ms=W                           its own watchdog: after W ms, "watchdog: timeout" and exit 6
//                                             (as PyTorch's NCCL watchdog ends a hung rank)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

// A pickle (protocol 2) of {"version": "2.2", "entries": [{"collective_seq_id": seq, "state": "completed"}]}.
std::string flight_recorder_dump(std::int32_t seq) {
  auto text = [](const std::string& s) {
    const auto n = static_cast<std::uint32_t>(s.size());
    std::string out = "X";
    for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
    return out + s;
  };
  std::string seq_bytes = "J";
  for (int i = 0; i < 4; ++i) seq_bytes += static_cast<char>((static_cast<std::uint32_t>(seq) >> (8 * i)) & 0xff);
  return std::string("\x80\x02}(") + text("version") + text("2.2") + text("entries") + "](}(" +
         text("collective_seq_id") + seq_bytes + text("state") + text("completed") + "ueu.";
}

[[noreturn]] void flight_recorder(long every_ms, long for_ms) {
  const char* pipe_prefix = std::getenv("TORCH_NCCL_DEBUG_INFO_PIPE_FILE");
  const char* dump_prefix = std::getenv("TORCH_NCCL_DEBUG_INFO_TEMP_FILE");
  if (!pipe_prefix || !dump_prefix) std::_Exit(2);
  const std::string rank = std::to_string(hangbench::phase::launcher_rank());
  const std::string pipe = std::string(pipe_prefix) + rank + ".pipe", dump = std::string(dump_prefix) + rank;
  if (::mkfifo(pipe.c_str(), 0600) != 0) std::_Exit(3);
  const int fd = ::open(pipe.c_str(), O_RDWR | O_NONBLOCK);  // RDWR: never EOF when a writer leaves
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) != 1) continue;
    char byte;
    while (::read(fd, &byte, 1) == 1) {
    }
    const long elapsed = static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());
    const auto seq = static_cast<std::int32_t>(std::min(elapsed, for_ms) / every_ms);
    // Written beside it under a name no reader takes for a dump, then renamed: never seen half written.
    const std::string tmp = dump.substr(0, dump.rfind('/') + 1) + ".fr-dump.tmp";
    std::ofstream(tmp, std::ios::binary) << flight_recorder_dump(seq);
    std::rename(tmp.c_str(), dump.c_str());
  }
}

[[noreturn]] void flight_recorder_silent() {
  const char* pipe_prefix = std::getenv("TORCH_NCCL_DEBUG_INFO_PIPE_FILE");
  if (!pipe_prefix) std::_Exit(2);
  const std::string pipe = std::string(pipe_prefix) + std::to_string(hangbench::phase::launcher_rank()) + ".pipe";
  if (::mkfifo(pipe.c_str(), 0600) != 0) std::_Exit(3);
  std::thread([] {
    for (volatile unsigned long n = 0;; n = n + 1) {
    }
  }).detach();
  const int fd = ::open(pipe.c_str(), O_RDWR | O_NONBLOCK);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) != 1) continue;
    char byte;
    while (::read(fd, &byte, 1) == 1) {
    }
    std::fprintf(stderr,
                 "[rank0]:[E1206 02:51:42.632109959 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
                 "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0\n");
    std::fflush(stderr);
  }
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
  if (mode != "spin" && mode != "fr-silent")
    hangbench::phase::mark("init_done");  // spin: a job that does not speak the protocol
  std::printf("mode %s\n", mode.c_str());
  std::fflush(stdout);
  if (mode == "fr-silent") flight_recorder_silent();
  if (mode == "spin")
    for (volatile unsigned long n = 0;; n = n + 1) {
    }
  if (mode == "pipe") block_on_own_pipe();
  if (mode == "deadlock") deadlock();
  if (mode == "fr")
    flight_recorder(hb_test::arg_long(argc, argv, "every-ms", 300), hb_test::arg_long(argc, argv, "for-ms", 5000));
  if (mode == "signal") {
    ::raise(static_cast<int>(hb_test::arg_long(argc, argv, "signal", SIGTERM)));
    return 0;
  }
  progress(hb_test::arg_long(argc, argv, "every-ms", 1000), hb_test::arg_long(argc, argv, "for-ms", 5000));
  return static_cast<int>(hb_test::arg_long(argc, argv, "exit", 0));
}
