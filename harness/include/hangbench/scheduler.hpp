// Runs the trials of all cells on `concurrency` worker threads, interleaving the
// cells (round-robin by trial index) so that a run stopped early has balanced cells.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/executor.hpp"
#include "hangbench/model.hpp"
#include "hangbench/shard.hpp"

namespace hangbench {

struct PlannedTrial {
  const Cell* cell = nullptr;
  int index = 0;
};

using TrialSkip = std::set<std::pair<std::string, int>>;  // (cell id, index)

// The trials of one invocation in plan order (index 0 of every cell, then index 1
// of every cell, ...) minus `skip` and, with a shard, minus other shards' trials,
// one at a time: nothing per trial is held, so a plan of millions costs nothing
// before its first trial. The matrix and skip must outlive it.
class PlanCursor {
 public:
  PlanCursor(const Matrix& matrix, const TrialSkip& skip, const std::optional<Shard>& shard = std::nullopt);
  std::optional<PlannedTrial> next();
  // Trials of each cell (by position in matrix.cells) that the cursor yields in all.
  const std::vector<long>& per_cell() const { return per_cell_; }
  long total() const { return total_; }

 private:
  const Matrix& matrix_;
  const TrialSkip& skip_;
  std::optional<ShardOwnership> owner_;
  std::vector<size_t> active_;  // cells with trials past index_, in matrix order
  size_t pos_ = 0;              // next of active_ at index_
  int index_ = 0;
  std::vector<long> per_cell_;
  long total_ = 0;
};

// The whole plan at once (tests, small matrices): what PlanCursor yields.
std::vector<PlannedTrial> plan_trials(const Matrix& matrix, const TrialSkip& skip = {});

struct ScheduleOptions {
  int concurrency = 0;                         // 0 = hardware concurrency
  std::set<std::pair<std::string, int>> skip;  // (cell id, index) already recorded
  std::optional<Shard> shard;                  // run only this shard's trials
  TrialContext context;                        // run_dir, grace, stacks; trial_id is set per trial
  const std::atomic<bool>* cancel = nullptr;   // stop taking new trials when set
};

// Called one at a time (never concurrently), from worker threads.
struct ScheduleCallbacks {
  std::function<void(const TrialResult&)> on_trial;  // every finished, non-interrupted trial
  std::function<void(const Cell&)> on_cell_done;     // after the last trial of a cell
};

// Returns the number of trials that finished (interrupted ones excluded).
int run_schedule(const Matrix& matrix, TrialExecutor& executor, const ScheduleOptions& options,
                 const ScheduleCallbacks& callbacks);

}  // namespace hangbench
