// Per-trial numbers derived from the phase lines, shared by summarize() and the
// per-trial exporters (CSV, JSON).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "hangbench/model.hpp"

namespace hangbench::report {

// teardown_end - teardown_begin of each rank (ranks told apart by the rank the
// launcher gave, else by pid), and the slowest rank's time for the trial. A rank
// that never reported teardown_end (it hung there) contributes nothing.
std::optional<double> teardown_seconds(const TrialResult& trial);

// True when the cell's parameters carry every axis=value of the filter.
bool cell_matches(const Cell& cell, const std::map<std::string, std::string>& filter);

// INFRA trials say nothing about the workload: they leave every count.
inline bool counted(const TrialResult& trial) { return trial.outcome != Outcome::Infra; }

}  // namespace hangbench::report
