// The words of a release-table row, the same in Markdown and HTML.
#pragma once

#include <string>
#include <vector>

#include "hangbench/sweep.hpp"

namespace hangbench::sweep {

std::string static_text(const Row& row);
// The static column's heading: nccl-socket-close-alias's check, named as such under another entry.
std::string static_header(const Result& r);                // "shutdown() in ncclSocketClose: absent"
std::string verdict_text(const Row& row);                  // "vulnerable", "inconclusive: …", "not run: …"
std::string interval_text(const validate::ArmTally& arm);  // "[0.59, 1.00]"
std::string short_sha(const Row& row);                     // first 12 hex digits, as shipped
std::string argv_text(const std::vector<std::string>& argv);
std::string slimmed_note(const Result& r);  // "" when no row was slimmed
std::string trials_text(const Result& r);   // "7 trials", or "4 trials (16 per reference)"
// "vulnerable (p = 5.8e-04 vs fixed, 1 vs vulnerable)": one cell of the release x known-hang table.
std::string hang_cell_text(const HangCell& cell);

}  // namespace hangbench::sweep
