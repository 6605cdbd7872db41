// Reads a trial's phases.jsonl (workloads/common/phase.hpp): phase lines become
// PhaseEvents, every other line becomes a metric. Malformed lines are skipped
// with one warning per file naming the first file:line and how many there were;
// they never fail the trial.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench::exec_detail {

struct PhaseLog {
  std::vector<PhaseEvent> phases;  // in file order
  nlohmann::json metrics = nlohmann::json::object();
};

// A phase line ({"phase": name, "t": unix seconds, "pid", "rank"}) as a PhaseEvent; nullopt for other lines.
std::optional<PhaseEvent> phase_event(const nlohmann::json& j);

PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn);

// Name of the last phase that started at or before `deadline` (unix seconds), or "".
std::string last_phase_before(const std::vector<PhaseEvent>& phases, double deadline);

}  // namespace hangbench::exec_detail

namespace hangbench::exec_detail {

// Follows a running trial's phase file: each poll() returns the phase lines
// completed since the previous one (a line still being written waits).
class PhaseFollower {
 public:
  explicit PhaseFollower(std::string path) : path_(std::move(path)) {}
  std::vector<PhaseEvent> poll();

 private:
  std::string path_;
  long long offset_ = 0;
  std::string partial_;
};

// The earliest phase-relative deadline (unix seconds) the phases seen so far set,
// or +infinity; `which` gets the phase that set it.
double phase_deadline(const std::vector<PhaseEvent>& phases, const std::map<std::string, double>& timeouts,
                      std::string* which = nullptr);

}  // namespace hangbench::exec_detail
