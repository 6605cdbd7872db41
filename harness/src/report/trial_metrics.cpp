#include "report/trial_metrics.hpp"

#include <algorithm>

namespace hangbench::report {

std::optional<double> teardown_seconds(const TrialResult& trial) {
  struct RankTimes {
    std::optional<double> begin, end;
  };
  std::map<std::string, RankTimes> ranks;
  for (const PhaseEvent& e : trial.phases) {
    std::string key = e.rank >= 0 ? "rank" + std::to_string(e.rank) : "pid" + std::to_string(e.pid);
    RankTimes& times = ranks[key];
    // First begin and last end: a rank that re-enters teardown is timed as a whole.
    if (e.name == "teardown_begin" && !times.begin) times.begin = e.t;
    if (e.name == "teardown_end") times.end = std::max(times.end.value_or(e.t), e.t);
  }
  std::optional<double> slowest;
  for (const auto& [key, times] : ranks) {
    if (!times.begin || !times.end) continue;
    double seconds = *times.end - *times.begin;
    slowest = std::max(slowest.value_or(seconds), seconds);
  }
  return slowest;
}

bool cell_matches(const Cell& cell, const std::map<std::string, std::string>& filter) {
  return params_match(cell.params, filter);
}

}  // namespace hangbench::report
