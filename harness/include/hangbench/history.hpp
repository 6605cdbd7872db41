// The nightly history: a hangbench store (same schema) that collects one run per
// night, read back per cell night by night, and the regression check of tonight's
// run against the previous nights. docs/nightly.md describes the whole job.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hangbench/model.hpp"
#include "hangbench/store.hpp"
#include "hangbench/summary.hpp"

namespace hangbench::history {

// Copies every run of the store at `run_store_path` that `history` does not hold
// yet (run, provenance and all trials, through the Store API). Returns the ids
// appended, oldest first. Throws StoreError.
std::vector<std::string> append_runs(Store& history, const std::string& run_store_path);

// What a cell ran over in one night, and how it was run; a change between
// consecutive nights is marked.
struct Stack {
  std::string nccl;            // SHA-256 of the cell's NCCL libraries (hashed files named *nccl*)
  std::string driver;          // provenance driver
  std::string torch;           // libtorch hashes and TORCH_VERSION-like environment entries
  std::string matrix;          // the matrix's SHA-256 (its file and every --set)
  std::string options;         // the cell's trials, timeout, command, environment, launcher, expectation
  std::string phase_timeouts;  // the cell's phase deadlines ("none" without any)
};

// Names of what changed from `before` to `after` ("nccl", "driver", "libtorch",
// "matrix", "options", "phase timeouts"); an empty side (not known that night) is
// no change.
std::vector<std::string> stack_changes(const Stack& before, const Stack& after);
Stack stack_of(const Cell& cell, const Provenance& provenance);

struct CellNight {
  std::string run_id;
  std::string started_at;  // ISO 8601 UTC: the night's date
  int hangs = 0, n = 0;
  int crashed = 0, failed = 0;  // in n, as trials that did not hang
  Quantiles wall_s, teardown_s;
  Verdict verdict = Verdict::None;
  Stack stack;
  std::vector<std::string> changes;  // against the previous night of the same cell
};

// A cell is known by its matrix's name and its id: two matrices may share ids.
struct CellHistory {
  std::string matrix;
  std::string cell_id;
  std::vector<CellNight> nights;  // oldest first
};

struct HistoryTable {
  std::string store_path;
  std::vector<CellHistory> cells;  // first-seen order
  // The HTML page: each night's square links here, "{run}" replaced by its run id
  // and "{matrix}" by its matrix's name ("" = no links); a cell's latest night is
  // marked regressed when its rate is above its earlier nights' at `alpha`.
  std::string report_link;
  double alpha = 0.01;
};

// Reads the last `nights` runs (0 = all) of the history; keeps cells whose id
// contains one of `cell_filters` (all when empty). Throws StoreError.
HistoryTable load_history(const Store& history, int nights, const std::vector<std::string>& cell_filters);

// "table", "markdown", "json", "html"; throws std::invalid_argument otherwise.
std::string render_history(const HistoryTable& table, const std::string& format);

// One cell of tonight's run against the pooled previous nights of the same cell
// (same matrix name, same cell id).
struct CellCheck {
  std::string cell_id;
  int hangs = 0, n = 0;  // tonight
  int baseline_hangs = 0, baseline_n = 0;
  int baseline_nights = 0;  // the previous runs pooled (a date may hold several)
  int baseline_dates = 0;   // the dates they ran on
  double p_worse = 1;       // one-sided Fisher: tonight's rate higher
  double log10_p_worse = 0;
  bool regression = false;          // p_worse < alpha
  Verdict verdict = Verdict::None;  // tonight's expectation verdict
  std::string verdict_reason;
};

struct CheckResult {
  std::string run_id;
  std::string suite;  // matrix name
  double alpha = 0.01;
  std::vector<CellCheck> cells;
  int exit_code = exit_code::kOk;  // 1 on a regression or a contradicted expectation
};

// Throws StoreError when the run is unknown.
CheckResult check_run(const Store& history, const std::string& run_id, int nights, double alpha);
// JUnit XML: one testcase per cell, a <failure> for a regression or a contradiction.
std::string render_check_junit(const CheckResult& result);
// A few lines for people: one per cell.
std::string render_check_text(const CheckResult& result);

}  // namespace hangbench::history
