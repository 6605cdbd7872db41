// Worker threads take trials from one queue in plan order; callbacks run under
// one mutex so that the store and the exporters never see two trials at once.
#include "hangbench/scheduler.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace hangbench {

PlanCursor::PlanCursor(const Matrix& matrix, const TrialSkip& skip, const std::optional<Shard>& shard)
    : matrix_(matrix), skip_(skip), per_cell_(matrix.cells.size(), 0) {
  if (shard) owner_.emplace(matrix, *shard);
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < matrix.cells.size(); ++i) {
    const Cell& c = matrix.cells[i];
    position.emplace(c.id, i);
    per_cell_[i] = owner_ ? owner_->owned(i) : c.trials;
    if (c.trials > 0) active_.push_back(i);
  }
  for (const auto& [cell, index] : skip) {  // what was recorded, of this invocation's share, is not run again
    auto it = position.find(cell);
    if (it == position.end() || index < 0 || index >= matrix.cells[it->second].trials) continue;
    if (owner_ && !owner_->owns(it->second, index)) continue;
    --per_cell_[it->second];
  }
  for (long n : per_cell_) total_ += n;
}

std::optional<PlannedTrial> PlanCursor::next() {
  while (!active_.empty()) {
    if (pos_ == active_.size()) {  // the next index: cells that have no more trials leave
      ++index_;
      pos_ = 0;
      std::erase_if(active_, [&](size_t cell) { return matrix_.cells[cell].trials <= index_; });
      continue;
    }
    const size_t cell = active_[pos_++];
    const Cell& c = matrix_.cells[cell];
    if (owner_ && !owner_->owns(cell, index_)) continue;
    if (!skip_.empty() && skip_.count({c.id, index_})) continue;
    return PlannedTrial{&c, index_};
  }
  return std::nullopt;
}

std::vector<PlannedTrial> plan_trials(const Matrix& matrix, const TrialSkip& skip) {
  std::vector<PlannedTrial> plan;
  PlanCursor cursor(matrix, skip);
  while (auto t = cursor.next()) plan.push_back(*t);
  return plan;
}

int run_schedule(const Matrix& matrix, TrialExecutor& executor, const ScheduleOptions& options,
                 const ScheduleCallbacks& callbacks) {
  PlanCursor cursor(matrix, options.skip, options.shard);
  std::vector<long> remaining = cursor.per_cell();  // trials left per cell (by position)
  const Cell* first_cell = matrix.cells.empty() ? nullptr : &matrix.cells.front();

  int workers = options.concurrency > 0 ? options.concurrency : static_cast<int>(std::thread::hardware_concurrency());
  workers = static_cast<int>(std::max<long>(1, std::min<long>(workers, cursor.total())));

  std::mutex mutex;  // guards cursor, done, finished, remaining and the callbacks
  bool done = false;
  int finished = 0;
  std::exception_ptr first_error;
  auto worker = [&] {
    for (;;) {
      PlannedTrial planned;
      {
        std::lock_guard lock(mutex);
        if (done || (options.cancel && options.cancel->load())) return;
        auto t = cursor.next();
        if (!t) {
          done = true;
          return;
        }
        planned = *t;
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
        if (--remaining[static_cast<size_t>(planned.cell - first_cell)] == 0 && callbacks.on_cell_done) {
          callbacks.on_cell_done(*planned.cell);
        }
      } catch (...) {
        // A failing store or executor stops the run; the first error is rethrown below.
        std::lock_guard lock(mutex);
        if (!first_error) first_error = std::current_exception();
        done = true;
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
