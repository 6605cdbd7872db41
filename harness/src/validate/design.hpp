// The fixed design shared by `validate` (one library) and `sweep` (many): every
// candidate beside the two references, one wave of trials, references reused from
// earlier runs when the store has them (same bytes, same command, same count).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "hangbench/validate.hpp"

namespace hangbench::validate {

struct DesignRun {
  std::vector<ArmTally> candidates;  // in the order given
  ArmTally vulnerable, fixed;
  double timeout_s = 0;
  double teardown_timeout_s = 0;
  double teardown_timeout_learned_s = 0;  // lowered during the run from the fixed reference; 0 = not
  std::string workload_command;
  std::string run_id, run_dir;
  Provenance provenance;
};

// `request.library` is ignored; `candidates` are judged. `concurrency` 0 = every
// trial at once. Throws ConfigError for missing references or workload.
DesignRun run_design(const Request& request, const std::vector<std::string>& candidates, int concurrency,
                     TrialExecutor* executor, std::ostream* log);

// How many trials run at once: `requested` when given (capped at `all`); else every
// trial at once for one rank, but for several ranks per trial (each a libtorch process
// on the GPU) at most one rank per core, or the ranks' start-up outlasts the deadline.
int trials_at_once(int all, int requested, int ranks, unsigned cores);

// The cell id of candidate i ("lib=candidate" when there is one).
std::string candidate_cell(size_t index, size_t count);

}  // namespace hangbench::validate
