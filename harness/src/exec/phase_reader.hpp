// Reads a trial's phases.jsonl (workloads/common/phase.hpp): phase lines become
// PhaseEvents, every other line becomes a metric. A malformed line is skipped
// with a warning naming file:line; it never fails the trial.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hangbench/model.hpp"

namespace hangbench::exec_detail {

struct PhaseLog {
  std::vector<PhaseEvent> phases;      // in file order
  nlohmann::json metrics = nlohmann::json::object();
};

PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn);

// Name of the last phase that started at or before `deadline` (unix seconds), or "".
std::string last_phase_before(const std::vector<PhaseEvent>& phases, double deadline);

}  // namespace hangbench::exec_detail
