// Runs the trials of all cells on `concurrency` worker threads, interleaving the
// cells (round-robin by trial index) so that a run stopped early has balanced cells.
#pragma once

#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/executor.hpp"
#include "hangbench/model.hpp"

namespace hangbench {

struct PlannedTrial {
  const Cell* cell = nullptr;
  int index = 0;
};

// Trial order: index 0 of every cell, then index 1 of every cell, ... minus `skip`.
std::vector<PlannedTrial> plan_trials(const Matrix& matrix, const std::set<std::pair<std::string, int>>& skip = {});

struct ScheduleOptions {
  int concurrency = 0;                         // 0 = hardware concurrency
  std::set<std::pair<std::string, int>> skip;  // (cell id, index) already recorded
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
