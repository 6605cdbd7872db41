// The release-note table of `hangbench evidence`: per build and scenario, hangs k
// of n, the 95 % interval, Fisher's p against the reference build, and one line
// of provenance per run. Markdown that pastes into a GitHub release note as is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/summary.hpp"

namespace hangbench::evidence {

using CellFilter = std::map<std::string, std::string>;

// "build=2.18.1" or "build=2.18.1,fork=after". nullopt and *error when malformed.
std::optional<CellFilter> parse_cell_filter(const std::string& text, std::string* error);

struct EvidenceRun {
  std::string id;             // the store's run id, shown in the table
  const RunSummary* summary;  // not owned
};

// Each non-reference cell is compared with the reference cells of the same
// scenario (equal values on every axis the filter does not name), taken from the
// same run when it has them, else from all runs; with no such cells, "–".
// The build column shows the values of the filter's axes (else the axis
// "build", else nothing); the scenario column the remaining axes.
std::string render_evidence_markdown(const std::vector<EvidenceRun>& runs, const CellFilter& reference);

}  // namespace hangbench::evidence
