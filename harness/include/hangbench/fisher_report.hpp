// What `hangbench stats fisher A B` prints, as text or JSON, for users who bring
// their own tallies. Kept out of the CLI file so tests can check it directly.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "hangbench/stats.hpp"

namespace hangbench::stats {

nlohmann::ordered_json fisher_report_json(Tally a, Tally b, double alpha);
std::string fisher_report_text(Tally a, Tally b, double alpha);

}  // namespace hangbench::stats
