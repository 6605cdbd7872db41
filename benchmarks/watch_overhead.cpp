// What watching costs (issue 42: 8 ranks under 1% of one core). Two measures:
//   BM_ReadEightRanks     one poll of the real readers over 8 sleeping ranks (CPU time
//                         per poll; at one poll a second, its share of a core is the
//                         counter core_percent_at_1hz); the process tree is listed
//                         again every 5 s of the simulated clock, as in a watch.
//   BM_WatcherProcess     `hangbench watch` itself over a job of 8 ranks for 30 s:
//                         the watcher process's own CPU time (utime + stime from
//                         /proc) over the wall time, as core_percent.
// Run: build/benchmarks/watch_overhead --benchmark_out=FILE --benchmark_out_format=json
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hangbench/watch.hpp"

namespace {

constexpr int kRanks = 8;

// A launcher and 8 ranks (RANK=i in their environment), all asleep.
int start_job(int seconds) {
  int root = ::fork();
  if (root == 0) {
    ::setpgid(0, 0);
    for (int i = 0; i < kRanks; ++i) {
      if (::fork() == 0) {
        const std::string rank = "RANK=" + std::to_string(i);
        ::putenv(const_cast<char*>(rank.c_str()));
        ::execlp("sleep", "sleep", std::to_string(seconds).c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
    }
    while (::wait(nullptr) > 0) {
    }
    ::_exit(0);
  }
  return root;
}

void end_job(int root) {
  ::kill(-root, SIGKILL);
  ::kill(root, SIGKILL);
  ::waitpid(root, nullptr, 0);
}

void BM_ReadEightRanks(benchmark::State& state) {
  const int root = start_job(600);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the ranks exist
  hangbench::watch::JobScope scope;
  scope.root_pid = root;
  scope.gpu = true;  // NVML when this machine has it
  auto reader = hangbench::watch::make_proc_reader(scope);
  double t = 0;
  std::size_t ranks = 0;
  timespec cpu0{}, cpu1{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  for (auto _ : state) {
    auto s = reader->read(t);
    ranks = s.cpu_s.size();
    t += 1;  // one poll a second
    benchmark::DoNotOptimize(s);
  }
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
  end_job(root);
  const double cpu =
      static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec);
  state.counters["ranks_read"] = static_cast<double>(ranks);
  // One poll a second: the CPU seconds of one poll are its share of a core.
  state.counters["core_percent_at_1hz"] = 100 * cpu / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ReadEightRanks)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();

double cpu_seconds_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  return hangbench::watch::parse_cpu_seconds(line, ::sysconf(_SC_CLK_TCK)).value_or(-1);
}

void BM_WatcherProcess(benchmark::State& state) {
  const int seconds = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const int watcher = ::fork();
    if (watcher == 0) {
      const std::string script =
          "for i in 0 1 2 3 4 5 6 7; do RANK=$i sleep " + std::to_string(seconds + 30) + " & done; wait";
      const std::string exe = std::string(HB_BINARY_DIR) + "/harness/hangbench";
      ::execl(exe.c_str(), exe.c_str(), "watch", "--idle", "300", "--", "sh", "-c", script.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const double cpu = cpu_seconds_of(watcher);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(wall);
    state.counters["watcher_cpu_s"] = cpu;
    state.counters["core_percent"] = 100 * cpu / wall;
    // The watcher's children: the job (its own process group, the ranks in it) and the output relay.
    std::ifstream children("/proc/" + std::to_string(watcher) + "/task/" + std::to_string(watcher) + "/children");
    std::vector<int> kids;
    for (int pid; children >> pid;) kids.push_back(pid);
    ::kill(watcher, SIGKILL);
    ::waitpid(watcher, nullptr, 0);
    for (int pid : kids) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
  }
}
BENCHMARK(BM_WatcherProcess)->Arg(30)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
