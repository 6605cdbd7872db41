// The harness's own cost per healthy trial: spawn /bin/true in its own session
// (and cgroup where allowed), wait, scan /proc for leftovers, reap, record one
// SQLite row. /bin/true itself takes well under a millisecond, so the time per
// iteration is the harness's overhead. BM_ConcurrentTrials runs K trials at once
// through the scheduler; items_per_second should grow with K up to the cores.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "hangbench/evidence.hpp"
#include "hangbench/executor.hpp"
#include "hangbench/scheduler.hpp"
#include "hangbench/store.hpp"

namespace fs = std::filesystem;
using namespace hangbench;

namespace {

Cell true_cell(int trials) {
  Cell c;
  c.id = "bench=true";
  c.argv = {"/bin/true"};
  c.trials = trials;
  c.timeout_s = 30;
  return c;
}

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("hb_bench_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void BM_HealthyTrial(benchmark::State& state) {
  fs::path dir = fresh_dir("single");
  Store store = Store::open((dir / "hangbench.sqlite").string());
  store.begin_run("bench", Matrix{}, Provenance{});
  ProcessExecutor executor(diagnose::make_hang_capture());
  Cell cell = true_cell(1);
  TrialContext ctx;
  ctx.run_dir = dir.string();
  int index = 0;
  for (auto _ : state) {
    TrialResult r = executor.run(cell, index++, ctx);
    store.record_trial("bench", r);
    if (r.outcome != Outcome::Passed) state.SkipWithError(("trial did not pass: " + r.infra_error).c_str());
  }
  state.counters["cgroup"] = executor.cgroups_available() ? 1 : 0;
  fs::remove_all(dir);
}
BENCHMARK(BM_HealthyTrial)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ConcurrentTrials(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  fs::path dir = fresh_dir("concurrent" + std::to_string(k));
  Store store = Store::open((dir / "hangbench.sqlite").string());
  store.begin_run("bench", Matrix{}, Provenance{});
  ProcessExecutor executor(diagnose::make_hang_capture());
  Matrix matrix;
  matrix.cells = {true_cell(8 * k)};
  ScheduleOptions options;
  options.concurrency = k;
  options.context.run_dir = dir.string();
  int64_t trials = 0;
  for (auto _ : state) {
    trials +=
        run_schedule(matrix, executor, options, {[&](const TrialResult& r) { store.record_trial("bench", r); }, {}});
  }
  state.SetItemsProcessed(trials);
  fs::remove_all(dir);
}
BENCHMARK(BM_ConcurrentTrials)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
