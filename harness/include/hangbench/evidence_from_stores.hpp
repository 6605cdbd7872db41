// Loads the runs `hangbench evidence` names from one or more stores and renders
// the release-note table. Usage errors (a store or run that does not exist)
// throw EvidenceUsageError (exit 2); database failures throw StoreError (exit 3).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "hangbench/errors.hpp"
#include "hangbench/evidence_table.hpp"

namespace hangbench::evidence {

class EvidenceUsageError : public UsageError {  // bad input: exit 2
 public:
  using UsageError::UsageError;
};

// Without run ids, the latest run of every store; with them, every run of those
// ids found in the stores (each id must be found at least once).
std::string evidence_from_stores(const std::vector<std::string>& store_paths, const std::vector<std::string>& run_ids,
                                 const CellFilter& reference);

}  // namespace hangbench::evidence
