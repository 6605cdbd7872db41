// A whole run, end to end: store, provenance, schedule, exporters, exit code.
// `hangbench run`, `hangbench validate` and the nightly CI call this.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/executor.hpp"
#include "hangbench/model.hpp"
#include "hangbench/shard.hpp"
#include "hangbench/summary.hpp"

namespace hangbench {

// How a run shows its progress on `log` (`--progress`): redrawn in place on a
// terminal, a line every few seconds for CI logs, or not at all.
enum class ProgressMode { None, Tty, Plain };

struct RunOptions {
  std::string out_dir;        // "" = hangbench-out/<run id>
  std::optional<int> trials;  // overrides every cell's trial count
  std::optional<int> concurrency;
  std::optional<double> timeout_s;
  std::map<std::string, double> phase_timeouts_s;  // --phase-timeout PHASE=S, merged over the matrix's
  std::vector<std::string> formats = {"markdown", "json", "csv", "junit", "html"};
  bool strict = false;
  std::vector<std::pair<std::string, std::string>> filters;  // axis=value
  ProgressMode progress = ProgressMode::None;                // progress on `log`
  double progress_interval_s = 5;                            // plain mode: seconds between lines
  std::ostream* log = nullptr;                               // progress and warnings; nullptr = silent
  TrialExecutor* executor = nullptr;                         // nullptr = a ProcessExecutor
  const std::atomic<bool>* cancel = nullptr;                 // SIGINT/SIGTERM: stop, mark interrupted
  std::optional<Shard> shard;                                // --shard K/N: only this share of the trials
  std::string resume_run_id;                                 // --resume --run ID; "" = the only unfinished run
  std::optional<Matrix> resume_matrix;                       // --resume --matrix M: must match the stored cells
  // Library callers (validate): phase timeouts lowered during the run, and a hook
  // told of each trial once it is recorded (from the scheduler's threads).
  std::shared_ptr<LivePhaseTimeouts> live_timeouts;
  std::function<void(const TrialResult&)> on_trial;
  // While the run goes on, its reports are rewritten at most every
  // report_interval_s (checked as trials end), and always once at its end: a run
  // of 10,000 quick cells must not render every report after every cell.
  double report_interval_s = 5;
  std::function<double()> clock;             // seconds, monotonic; nullptr = monotonic_seconds() (tests: a fake)
  std::function<void()> on_reports_written;  // tests: told each time the reports are rendered
};

struct RunResult {
  RunSummary summary;
  int exit_code = 0;  // exit_code_for(), or 3 when interrupted
  std::string run_id;
  std::string out_dir;
  std::string store_path;
  bool interrupted = false;
  std::vector<std::string> written;  // report files written
};

// Makes "20261202T104500Z-3fa9c1": UTC time + short random.
std::string new_run_id();
// "md" -> "markdown" etc.; throws ConfigError for unknown formats.
std::vector<std::string> normalize_formats(const std::vector<std::string>& formats);

// `matrix` as run_matrix() would run it: --trials, --timeout, --phase-timeout,
// --filter and --concurrency applied. Throws ConfigError for bad options.
Matrix apply_run_options(Matrix matrix, const RunOptions& options);
// `hangbench run --dry-run`: every cell with its command as launched, trial count,
// timeouts and expectation, and the totals; nothing is run or written. With a
// shard, only the trials `run --shard` would run (cells with none are left out).
std::string render_dry_run(const Matrix& planned, const std::optional<Shard>& shard = std::nullopt);

// The store of a run folder: <out_dir>/hangbench.sqlite.
inline constexpr const char* kRunStoreFile = "hangbench.sqlite";

// Starts a new run of `matrix`. Throws ConfigError (bad options) or StoreError.
RunResult run_matrix(Matrix matrix, const RunOptions& options);
// Continues the unfinished run of the store in options.out_dir (options.resume_run_id
// when several are). Throws ConfigError when options would change its cells.
RunResult resume_run(const RunOptions& options);
// Writes every format of `summary` into `dir`; returns the files written.
std::vector<std::string> write_reports(const RunSummary& summary, const std::string& dir,
                                       const std::vector<std::string>& formats);

}  // namespace hangbench
