#include "hangbench/executor.hpp"

namespace hangbench {

FakeExecutor::FakeExecutor(Outcome default_outcome) : default_outcome_(default_outcome) {}
FakeExecutor::FakeExecutor(Script script) : default_outcome_(Outcome::Passed), script_(std::move(script)) {}

void FakeExecutor::set(const std::string& cell_id, int index, Outcome outcome) {
  std::lock_guard lock(mutex_);
  scripted_[{cell_id, index}] = outcome;
}

TrialResult FakeExecutor::run(const Cell& cell, int index, const TrialContext& ctx) {
  {
    std::lock_guard lock(mutex_);
    calls_.emplace_back(cell.id, index);
  }
  if (ctx.cancel && ctx.cancel->load()) {
    TrialResult r;
    r.cell_id = cell.id;
    r.index = index;
    r.infra_error = kInterruptedError;
    return r;
  }
  if (script_) {
    TrialResult r = script_(cell, index);
    r.cell_id = cell.id;
    r.index = index;
    return r;
  }
  TrialResult r;
  r.cell_id = cell.id;
  r.index = index;
  {
    std::lock_guard lock(mutex_);
    auto it = scripted_.find({cell.id, index});
    r.outcome = it != scripted_.end() ? it->second : default_outcome_;
  }
  // Deterministic times so that reports of fake runs are reproducible.
  r.started_at = 1700000000.0 + index;
  r.wall_s = 0.001 * (index + 1);
  switch (r.outcome) {
    case Outcome::Passed:
      r.exit_code = 0;
      break;
    case Outcome::Failed:
      r.exit_code = 1;
      break;
    case Outcome::Crashed:
      r.signal = 11;
      break;
    case Outcome::Hang:
      r.wall_s = cell.timeout_s;
      r.hung_phase = "teardown_begin";
      break;
    case Outcome::Infra:
      r.infra_error = "scripted infrastructure failure";
      break;
  }
  return r;
}

std::vector<std::pair<std::string, int>> FakeExecutor::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

}  // namespace hangbench
