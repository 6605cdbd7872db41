// `hangbench merge STORE... --out DIR`: the stores of `run --shard K/N` jobs
// made into one run, with every report, as if the matrix had run unsharded.
#pragma once

#include <string>
#include <vector>

#include "hangbench/model.hpp"
#include "hangbench/shard.hpp"
#include "hangbench/summary.hpp"

namespace hangbench {

// One shard as read from its store (the store's latest run).
struct ShardRun {
  std::string store_path;
  std::string run_id;
  Shard shard;
  Matrix matrix;
  Provenance provenance;
  std::vector<TrialResult> trials;
};

// Reads the latest run of each store (a hangbench.sqlite, or the folder that
// holds one). Throws ConfigError when a store is missing or its run is not a shard.
std::vector<ShardRun> read_shards(const std::vector<std::string>& stores);

// The checks before anything is written; throws ConfigError naming the first
// problem: shard counts that differ, a shard given twice or missing, matrices or
// provenance that differ, a trial outside its shard, a duplicate or missing trial.
void check_shards(const std::vector<ShardRun>& shards);

// One provenance for the merged run: fields that must agree are taken as they
// are; hosts and kernels are listed (each trial keeps its own host); values of an
// environment variable that differ between shards are joined with " | ".
Provenance merge_provenance(const std::vector<ShardRun>& shards);
// Every trial of every shard in the store's order (cell order, then index).
std::vector<TrialResult> merge_trials(const std::vector<ShardRun>& shards);

struct MergeOptions {
  std::vector<std::string> stores;
  std::string out_dir;
  std::vector<std::string> formats = {"markdown", "json", "csv", "junit", "html"};
  bool strict = false;
  bool copy_trial_folders = true;  // evidence and logs of each trial, so the reports' links work
};

struct MergeResult {
  RunSummary summary;
  int exit_code = 0;  // exit_code_for() of the merged summary
  std::string run_id;
  std::string store_path;
  std::vector<std::string> written;
};

// Checks, then writes DIR/hangbench.sqlite (one new run) and the reports.
// Throws ConfigError (exit 2; nothing written) or StoreError (exit 3).
MergeResult merge_shards(const MergeOptions& options);

}  // namespace hangbench
