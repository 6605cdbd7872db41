// What diagnose costs per thread and per process (issue 38: "the cost per process and
// per thread comes from a benchmark, so its growth is stated"): the snapshot, the
// wait-for graph and the rules over
//   - one process with N threads, each blocked in read() on a pipe nobody writes;
//   - a tree of N processes, each blocked the same way (one thread each);
// with and without native stacks (libdw). Each benchmark reports `per_thread_ms` or
// `per_process_ms`: the wall time over N.
//   build/benchmarks/diagnose_scaling --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include "hangbench/diagnose.hpp"

namespace {

int blocked_pipe = -1;  // the read end every blocked thread waits on (inherited by the children)

void* block_forever(void*) {
  char c;
  while (::read(blocked_pipe, &c, 1) != 0) {
  }
  return nullptr;
}

// A child process with `threads` threads (the main one included), all blocked in read().
struct Hung {
  std::vector<int> pids;  // the root first
  Hung(int processes, int threads) {
    int ready[2], block[2];
    if (::pipe(ready) != 0 || ::pipe(block) != 0) std::abort();
    for (int i = 0; i < processes; ++i) {
      const int pid = ::fork();
      if (pid == 0) {
        blocked_pipe = block[0];
        ::close(ready[0]);
        for (int t = 1; t < threads; ++t) {
          pthread_t th;
          pthread_create(&th, nullptr, block_forever, nullptr);
        }
        if (::write(ready[1], "x", 1) != 1) ::_exit(3);
        block_forever(nullptr);
        ::_exit(0);
      }
      pids.push_back(pid);
    }
    ::close(ready[1]);
    char c;
    for (int i = 0; i < processes; ++i)
      if (::read(ready[0], &c, 1) != 1) std::abort();
    ::close(ready[0]);
    ::close(block[0]);  // the write end stays open here: nobody ever writes it
    write_end_ = block[1];
    ::usleep(100 * 1000);  // every thread reaches its read()
  }
  ~Hung() {
    for (int pid : pids) ::kill(pid, SIGKILL);
    for (int pid : pids) ::waitpid(pid, nullptr, 0);
    ::close(write_end_);
  }
  int write_end_ = -1;
};

void run(benchmark::State& state, int processes, int threads, bool stacks) {
  Hung hung(processes, threads);
  hangbench::diagnose::SnapshotOptions options;
  options.stacks = stacks;
  options.debugger.timeout_s = 60;
  for (auto _ : state) {
    const auto snapshot = hangbench::diagnose::take_snapshot(hung.pids, options);
    benchmark::DoNotOptimize(hangbench::diagnose::find_hang_shapes(snapshot));
  }
  state.counters["processes"] = processes;
  state.counters["threads"] = static_cast<double>(processes) * threads;
}

void BM_ThreadsOfOneProcess(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  run(state, 1, n, state.range(1) != 0);
  state.counters["per_thread_ms"] =
      benchmark::Counter(n / 1e3, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ThreadsOfOneProcess)
    ->ArgsProduct({{8, 64, 512}, {0, 1}})
    ->ArgNames({"threads", "stacks"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ProcessesOfOneTree(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  run(state, n, 1, state.range(1) != 0);
  state.counters["per_process_ms"] =
      benchmark::Counter(n / 1e3, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ProcessesOfOneTree)
    ->ArgsProduct({{4, 32, 128}, {0, 1}})
    ->ArgNames({"processes", "stacks"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
