// The results store: SQLite in WAL mode, one row per trial committed as soon as the
// trial ends, so that killing the harness loses at most the trials in flight.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/errors.hpp"
#include "hangbench/model.hpp"
#include "hangbench/shard.hpp"

struct sqlite3;

namespace hangbench {

// Any failure of the database; the CLI exits with code 3.
class StoreError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return exit_code::kInfra; }
  const char* kind() const override { return "store error"; }
};

// A file that is not a usable hangbench store (not SQLite, or it names paths
// outside its folder): bad input, exit 2, not a failing machine.
class StoreInputError : public StoreError {
 public:
  using StoreError::StoreError;
  int exit_code() const override { return exit_code::kUsage; }
  const char* kind() const override { return "error"; }
};

inline constexpr int kStoreSchemaVersion = 1;

struct RunInfo {
  std::string id;
  std::string started_at;      // ISO 8601 UTC
  std::string finished_at;     // "" while running or after a crash
  std::string status;          // "running", "complete", "interrupted"
  int trials = 0;              // rows recorded
  std::optional<Shard> shard;  // set for `run --shard K/N`: a part of the matrix only
  std::string matrix;          // the matrix's name (`name = ` in its file)
};

struct StoredRun {
  RunInfo info;
  Matrix matrix;
  Provenance provenance;
  std::vector<TrialResult> trials;  // ordered by cell order in the matrix, then index
};

class Store {
 public:
  // Opens or creates the database at `path` (and its schema). Throws StoreError.
  static Store open(const std::string& path);
  // Opens an existing store for reading only (report, evidence, merge's shards):
  // nothing is created beside it, so a store on a read-only file system reads.
  // Throws StoreInputError when `path` is not a hangbench store.
  static Store open_read_only(const std::string& path);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  void begin_run(const std::string& run_id, const Matrix& matrix, const Provenance& provenance,
                 const std::optional<Shard>& shard = std::nullopt);
  // One transaction; a second row for the same (run, cell, index) replaces the first.
  void record_trial(const std::string& run_id, const TrialResult& trial);
  // Many rows in one transaction (merge): all or none.
  void record_trials(const std::string& run_id, const std::vector<TrialResult>& trials);
  void finish_run(const std::string& run_id, const std::string& status);
  void set_status(const std::string& run_id, const std::string& status);

  StoredRun load_run(const std::string& run_id) const;  // throws StoreError when unknown
  std::vector<RunInfo> list_runs() const;               // oldest first
  std::set<std::pair<std::string, int>> completed_keys(const std::string& run_id) const;
  std::optional<std::string> latest_unfinished_run() const;  // status != "complete"
  std::optional<std::string> latest_run() const;
  const std::string& path() const { return path_; }

 private:
  Store(sqlite3* db, std::string path);
  void exec(const char* sql) const;
  void add_missing_columns();
  void insert_trial(const std::string& run_id, const TrialResult& trial);
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unique_ptr<std::mutex> mutex_;  // record_trial is called from worker threads
};

}  // namespace hangbench
