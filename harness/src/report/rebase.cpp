// `report --dest`: reports written away from the run folder still reach each
// trial's evidence, through paths relative to where the reports are.
#include <filesystem>

#include "hangbench/summary.hpp"

namespace fs = std::filesystem;

namespace hangbench {

void rebase_evidence_dirs(std::vector<TrialResult>& trials, const std::string& run_dir, const std::string& dest_dir) {
  const fs::path run = fs::absolute(run_dir).lexically_normal();
  const fs::path dest = fs::absolute(dest_dir).lexically_normal();
  if (run == dest) return;
  for (auto& t : trials) {
    if (t.evidence_dir.empty() || fs::path(t.evidence_dir).is_absolute()) continue;
    fs::path relative = (run / t.evidence_dir).lexically_normal().lexically_relative(dest);
    if (!relative.empty()) t.evidence_dir = relative.string();
  }
}

}  // namespace hangbench
