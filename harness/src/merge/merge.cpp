// merge_shards: check, then write one store and the reports. Nothing is written
// when a check fails; the output folder must not hold a store already.
#include "hangbench/merge.hpp"

#include <filesystem>

#include "hangbench/matrix.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/store.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

// A trial's folder (logs, evidence) lives under its shard's run folder; the
// merged reports link to it relative to the merged folder, at the same path.
void copy_trial_folders(const std::vector<ShardRun>& shards, const fs::path& out) {
  for (const auto& s : shards) {
    fs::path shard_dir = fs::path(s.store_path).parent_path();
    for (const auto& t : s.trials) {
      if (t.evidence_dir.empty()) continue;
      fs::path trial_dir = fs::path(t.evidence_dir).parent_path();  // trials/<cell>/<index>
      if (trial_dir.empty() || !fs::is_directory(shard_dir / trial_dir)) continue;
      fs::create_directories(out / trial_dir);
      fs::copy(shard_dir / trial_dir, out / trial_dir,
               fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    }
  }
}

}  // namespace

MergeResult merge_shards(const MergeOptions& options) {
  if (options.out_dir.empty()) throw UsageError("merge needs --out DIR");
  auto formats = normalize_formats(options.formats);
  fs::path out = options.out_dir;
  fs::path store_path = out / "hangbench.sqlite";
  if (fs::exists(store_path)) {
    throw UsageError("" + store_path.string() + " exists already; give a new --out folder");
  }
  auto shards = read_shards(options.stores);
  check_shards(shards);

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw StoreError("cannot create the output folder " + out.string() + ": " + ec.message());
  Matrix matrix = shards.front().matrix;
  Provenance provenance = merge_provenance(shards);
  std::vector<TrialResult> trials = merge_trials(shards);

  MergeResult result;
  result.run_id = new_run_id();
  Store store = Store::open(store_path.string());
  store.begin_run(result.run_id, matrix, provenance);
  store.record_trials(result.run_id, trials);
  store.finish_run(result.run_id, "complete");
  result.store_path = store.path();
  if (options.copy_trial_folders) copy_trial_folders(shards, out);

  result.summary = summarize(std::move(matrix), std::move(provenance), std::move(trials), true);
  result.written = write_reports(result.summary, out.string(), formats);
  result.exit_code = exit_code_for(result.summary, options.strict);
  return result;
}

}  // namespace hangbench
