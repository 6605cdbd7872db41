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

// Copies `from` into `to`: folders and regular files only. A link a workload
// planted in its trial folder is not followed (no copy of a folder elsewhere, no
// loop) and not copied: the merged folder holds nothing that points outside it.
void copy_folder_without_links(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    const auto status = entry.symlink_status();
    const fs::path target = to / entry.path().filename();
    if (fs::is_directory(status)) {
      copy_folder_without_links(entry.path(), target);
    } else if (fs::is_regular_file(status)) {
      fs::copy_file(entry.path(), target, fs::copy_options::overwrite_existing);
    }
  }
}

// A trial's folder (logs, evidence) lives under its shard's run folder; the
// merged reports link to it relative to the merged folder, at the same path.
// Only a folder that is inside its shard's folder, through no link, is copied.
void copy_trial_folders(const std::vector<ShardRun>& shards, const fs::path& out) {
  for (const auto& s : shards) {
    fs::path shard_dir = fs::path(s.store_path).parent_path();
    if (shard_dir.empty()) shard_dir = ".";
    std::error_code ec;
    const fs::path shard_real = fs::canonical(shard_dir, ec);
    if (ec) continue;
    for (const auto& t : s.trials) {
      if (t.evidence_dir.empty()) continue;
      fs::path trial_dir = fs::path(t.evidence_dir).parent_path();  // trials/<cell>/<index>
      if (trial_dir.empty() || trial_dir.is_absolute()) continue;
      const fs::path from = shard_dir / trial_dir;
      if (!fs::is_directory(fs::symlink_status(from, ec))) continue;
      if (fs::canonical(from, ec) != (shard_real / trial_dir).lexically_normal() || ec) continue;
      copy_folder_without_links(from, out / trial_dir);
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
  // The trial folders first: a store marked complete has its evidence beside it.
  if (options.copy_trial_folders) copy_trial_folders(shards, out);
  Store store = Store::open(store_path.string());
  store.begin_run(result.run_id, matrix, provenance);
  store.record_trials(result.run_id, trials);
  store.finish_run(result.run_id, "complete");
  result.store_path = store.path();

  result.summary = summarize(std::move(matrix), std::move(provenance), std::move(trials), true);
  result.written = write_reports(result.summary, out.string(), formats);
  result.exit_code = exit_code_for(result.summary, options.strict);
  return result;
}

}  // namespace hangbench
