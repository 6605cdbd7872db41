// Evidence capture of a hung trial whose tree holds many sleeping processes
// (issue 41, item 5: 2,000 children took 64 s, quadratic in the processes).
// Each size starts one tagged shell with N `sleep` children (all carrying the
// trial's HANGBENCH_TRIAL_ID, as a trial's children do), then times what the
// harness does before it kills a hung trial: capture_to_dir() (the trial's
// processes found by tag and tree, the snapshot, the rules, the files written).
//   build/benchmarks/hung_tree_capture [--benchmark_filter=Stacks]
// BM_HungTreeCapture: without stacks (the /proc reads, the holders, the rules);
// BM_HungTreeCaptureStacks: with libdw stacks under --timeout 20 (the whole
// capture's bound), one iteration each.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "hangbench/evidence.hpp"
#include "hangbench/proc.hpp"

extern char** environ;

namespace {

// A shell (its own process group) with `n` sleeping children, all tagged.
struct HungTree {
  pid_t pid = -1;
  std::string tag;

  explicit HungTree(int n) {
    tag = "HANGBENCH_TRIAL_ID=bench-" + std::to_string(::getpid()) + "-" + std::to_string(n);
    const std::string script =
        "i=0; while [ $i -lt " + std::to_string(n) + " ]; do sleep 100000 & i=$((i+1)); done; wait";
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    env.push_back(tag);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const char* argv[] = {"sh", "-c", script.c_str(), nullptr};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    if (::posix_spawnp(&pid, "sh", nullptr, &attr, const_cast<char* const*>(argv), envp.data()) != 0) std::abort();
    posix_spawnattr_destroy(&attr);
    // Ready once all n children are there.
    for (int i = 0; i < 6000 && static_cast<int>(hangbench::proc::process_tree("/proc", pid).size()) < n + 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~HungTree() {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

void capture(benchmark::State& state, bool stacks) {
  const int n = static_cast<int>(state.range(0));
  HungTree tree(n);
  const auto dir = std::filesystem::temp_directory_path() / ("hb_bench_capture_" + std::to_string(::getpid()));
  hangbench::diagnose::CaptureOptions opts;
  opts.stacks = stacks;
  opts.debugger.timeout_s = 20;
  opts.trial_env_entry = tree.tag;
  size_t processes = 0;
  for (auto _ : state) {
    auto result = hangbench::diagnose::capture_to_dir({tree.pid}, dir.string(), opts);
    processes = result.json.contains("processes") ? result.json["processes"].size() : 0;
    benchmark::DoNotOptimize(result);
  }
  state.counters["processes"] = static_cast<double>(processes);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

void BM_HungTreeCapture(benchmark::State& state) { capture(state, false); }
void BM_HungTreeCaptureStacks(benchmark::State& state) { capture(state, true); }

}  // namespace

BENCHMARK(BM_HungTreeCapture)
    ->Arg(250)
    ->Arg(500)
    ->Arg(1000)
    ->Arg(2000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK(BM_HungTreeCaptureStacks)
    ->Arg(250)
    ->Arg(500)
    ->Arg(1000)
    ->Arg(2000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

BENCHMARK_MAIN();
