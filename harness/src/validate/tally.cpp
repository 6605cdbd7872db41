// Classifies a library's trials by what they measured about its teardown.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "hangbench/validate.hpp"

namespace hangbench::validate {
namespace {

std::optional<double> phase_time(const TrialResult& t, const std::string& phase) {
  std::optional<double> at;
  for (const PhaseEvent& e : t.phases) {
    if (e.name == phase) at = e.t;
  }
  return at;
}

std::string last_phase(const TrialResult& t) {
  if (!t.hung_phase.empty()) return t.hung_phase;
  const PhaseEvent* last = nullptr;
  for (const PhaseEvent& e : t.phases) {
    if (last == nullptr || e.t >= last->t) last = &e;
  }
  return last ? last->name : "";
}

// "hung", "crashed (signal 11)", "exited 3"
std::string how_it_ended(const TrialResult& t) {
  switch (t.outcome) {
    case Outcome::Hang:
      return "hung";
    case Outcome::Crashed:
      return fmt::format("crashed (signal {})", t.signal);
    case Outcome::Failed:
      return fmt::format("exited {}", t.exit_code);
    case Outcome::Passed:
      return "exited 0";
    case Outcome::Infra:
      return "could not run";
  }
  return "?";
}

}  // namespace

void tally_trials(ArmTally& arm, const std::vector<TrialResult>& trials, const std::string& cell_id,
                  const std::string& teardown_phase) {
  for (const TrialResult& t : trials) {
    if (t.cell_id != cell_id) continue;
    // A trial the workload itself called INFRA (its infra_error metric) did start:
    // it is tallied as a stop with its reason, which validate's verdict names beside
    // the library's GPU code.
    const bool workload_said_infra = t.outcome == Outcome::Infra && !workload_infra_error(t).empty();
    if (t.outcome == Outcome::Infra && !workload_said_infra) {
      ++arm.infra;
      if (arm.first_infra_error.empty()) arm.first_infra_error = t.infra_error;
      continue;
    }
    // Without a teardown phase the whole trial is the teardown: every trial counts.
    const std::optional<double> teardown_at =
        teardown_phase.empty() ? std::optional<double>(t.started_at) : phase_time(t, teardown_phase);
    if (!teardown_at || workload_said_infra) {
      ++arm.before_teardown;
      const std::string phase = last_phase(t);
      ++arm.stopped[fmt::format("{} {}", how_it_ended(t),
                                phase.empty() ? "before reporting any phase" : "in phase '" + phase + "'")];
      const std::string reason = workload_infra_error(t);
      if (!reason.empty() &&
          std::find(arm.stop_reasons.begin(), arm.stop_reasons.end(), reason) == arm.stop_reasons.end()) {
        arm.stop_reasons.push_back(reason);
      }
      continue;
    }
    switch (t.outcome) {
      case Outcome::Hang:
        ++arm.teardown_hangs;
        break;
      case Outcome::Passed:
        ++arm.passed;
        arm.healthy_wall_s.push_back(t.wall_s);
        arm.healthy_teardown_s.push_back(std::max(0.0, t.started_at + t.wall_s - *teardown_at));
        break;
      default:
        ++arm.teardown_failures;
        break;
    }
  }
}

}  // namespace hangbench::validate
