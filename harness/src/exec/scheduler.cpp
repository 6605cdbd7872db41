// Worker threads take trials from one queue in plan order; callbacks run under
// one mutex so that the store and the exporters never see two trials at once.
#include "hangbench/scheduler.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace hangbench {

std::vector<PlannedTrial> plan_trials(const Matrix& matrix, const std::set<std::pair<std::string, int>>& skip) {
  std::vector<PlannedTrial> plan;
  int max_trials = 0;
  for (const auto& c : matrix.cells) max_trials = std::max(max_trials, c.trials);
  for (int index = 0; index < max_trials; ++index) {
    for (const auto& c : matrix.cells) {
      if (index < c.trials && !skip.count({c.id, index})) plan.push_back({&c, index});
    }
  }
  return plan;
}

int run_schedule(const Matrix& matrix, TrialExecutor& executor, const ScheduleOptions& options,
                 const ScheduleCallbacks& callbacks) {
  const auto plan = plan_trials(matrix, options.skip);
  std::map<std::string, int> remaining;  // trials left per cell
  for (const auto& t : plan) remaining[t.cell->id]++;

  int workers = options.concurrency > 0 ? options.concurrency : static_cast<int>(std::thread::hardware_concurrency());
  workers = std::max(1, std::min<int>(workers, static_cast<int>(plan.size())));

  std::mutex mutex;  // guards next, finished, remaining and the callbacks
  size_t next = 0;
  int finished = 0;
  std::exception_ptr first_error;
  auto worker = [&] {
    for (;;) {
      PlannedTrial planned;
      {
        std::lock_guard lock(mutex);
        if (next >= plan.size() || (options.cancel && options.cancel->load())) return;
        planned = plan[next++];
      }
      TrialContext ctx = options.context;
      ctx.cancel = options.cancel;
      ctx.trial_id.clear();  // the executor makes a unique one per trial
      try {
        TrialResult result = executor.run(*planned.cell, planned.index, ctx);
        if (was_interrupted(result)) continue;
        std::lock_guard lock(mutex);
        ++finished;
        if (callbacks.on_trial) callbacks.on_trial(result);
        if (--remaining[planned.cell->id] == 0 && callbacks.on_cell_done) callbacks.on_cell_done(*planned.cell);
      } catch (...) {
        // A failing store or executor stops the run; the first error is rethrown below.
        std::lock_guard lock(mutex);
        if (!first_error) first_error = std::current_exception();
        next = plan.size();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
  return finished;
}

}  // namespace hangbench
