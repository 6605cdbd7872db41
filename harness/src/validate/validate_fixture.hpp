// Trial results as the runner returns them, for the tests of validate's rule and
// of the sweep: a trial of a cell that reached some phases and ended one way.
#pragma once

#include <string>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench::testing {

// Every phase of nccl_teardown up to the teardown.
inline const std::vector<std::string> kWholeTrial = {"start", "nccl_loaded", "init_done", "teardown_begin"};

inline TrialResult trial(const std::string& cell, int index, Outcome outcome, const std::vector<std::string>& phases) {
  TrialResult t;
  t.cell_id = cell;
  t.index = index;
  t.outcome = outcome;
  t.exit_code = outcome == Outcome::Passed ? 0 : outcome == Outcome::Failed ? 3 : -1;
  t.signal = outcome == Outcome::Crashed ? 11 : 0;
  t.started_at = 1000.0 + index;
  t.wall_s = 1.5;
  double at = t.started_at;
  for (const auto& p : phases) t.phases.push_back({p, at += 0.1, 100 + index, 0, ""});
  if (outcome == Outcome::Hang && !phases.empty()) t.hung_phase = phases.back();
  return t;
}

}  // namespace hangbench::testing
