// `hangbench merge` of 8 shards of 1,000 trials each (issue 17's target: under
// 2 s), everything included: read and check the 8 stores, write the merged store
// in one transaction, summarize, render all five reports. The shard stores are
// built once, outside the timing, with realistic rows (phases, metrics).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "hangbench/merge.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/store.hpp"

namespace fs = std::filesystem;
using namespace hangbench;

namespace {

constexpr int kShards = 8;
constexpr int kTrialsPerShard = 1000;

Matrix bench_matrix() {
  Matrix m;
  m.name = "merge-bench";
  m.sha256 = std::string(64, 'c');
  for (int i = 0; i < 20; ++i) {  // 20 cells x 400 trials = 8,000 trials
    Cell c;
    c.id = "cell=" + std::to_string(i);
    c.params = {{"cell", std::to_string(i)}};
    c.trials = kShards * kTrialsPerShard / 20;
    c.expect = i % 2 ? Expectation::Hang : Expectation::NoHang;
    m.cells.push_back(c);
  }
  for (int i = 0; i + 1 < 20; i += 2) {
    m.comparisons.push_back(
        {"pair " + std::to_string(i), {{"cell", std::to_string(i + 1)}}, {{"cell", std::to_string(i)}}});
  }
  return m;
}

TrialResult bench_trial(const std::string& cell, int index, bool hangs) {
  TrialResult t;
  t.cell_id = cell;
  t.index = index;
  t.outcome = hangs ? Outcome::Hang : Outcome::Passed;
  t.started_at = 1700000000.0 + index;
  t.wall_s = hangs ? 3.0 : 0.6;
  for (const char* phase : {"connect", "init_done", "fork", "teardown_begin", "teardown_end"}) {
    t.phases.push_back({phase, t.started_at + 0.1 * t.phases.size(), 1000 + index, 0, "node-1"});
  }
  t.metrics = {{"tcp_state", "ESTABLISHED"}, {"helper_pid", 1200 + index}};
  t.harness.cleanup = CleanupStep::None;
  t.host = "node-" + std::to_string(index % kShards);
  return t;
}

// Eight shard stores in `dir`, as `run --shard K/8` would leave them.
std::vector<std::string> make_shards(const fs::path& dir) {
  Matrix m = bench_matrix();
  Provenance p = collect_provenance(m);
  std::vector<std::string> stores;
  for (int k = 0; k < kShards; ++k) {
    fs::path path = dir / ("shard-" + std::to_string(k)) / "hangbench.sqlite";
    Store store = Store::open(path.string());
    store.begin_run("shard-" + std::to_string(k), m, p, Shard{k, kShards});
    std::vector<TrialResult> trials;
    for (const auto& [cell, index] : trials_of_shard(m, {k, kShards})) {
      bool odd_cell = std::stoi(cell.substr(5)) % 2 == 1;
      trials.push_back(bench_trial(cell, index, odd_cell && index % 7 != 0));
    }
    store.record_trials("shard-" + std::to_string(k), trials);
    store.finish_run("shard-" + std::to_string(k), "complete");
    stores.push_back(path.string());
  }
  return stores;
}

void BM_Merge8ShardsOf1000Trials(benchmark::State& state) {
  fs::path dir = fs::temp_directory_path() / ("hb_bench_merge_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  MergeOptions options;
  options.stores = make_shards(dir);
  options.out_dir = (dir / "merged").string();
  size_t trials = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(options.out_dir);
    state.ResumeTiming();
    auto result = merge_shards(options);
    trials = result.summary.trials.size();
    benchmark::DoNotOptimize(result.written.data());
  }
  if (trials != kShards * kTrialsPerShard) state.SkipWithError("the merged run does not hold 8,000 trials");
  state.counters["trials"] = static_cast<double>(trials);
  fs::remove_all(dir);
}
BENCHMARK(BM_Merge8ShardsOf1000Trials)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
