// What to do about a known hang shape, each remedy with the measured comparison
// in results/ that backs it. A catalogued hang's remedies are its entry's
// (catalog/*.toml, measured ones only: an unmeasured remedy is not offered live);
// the bare socket shape, which no entry names, keeps its own here.
#include <algorithm>

#include "hangbench/catalog.hpp"
#include "hangbench/headline.hpp"

namespace hangbench::diagnose {

std::vector<Remedy> remedies_for(const std::string& key) {
  static const std::string socket = "results/socket-teardown-2026-12-02/report.md";
  if (key == "descriptor-alias-shape")
    return {{"shutdown() before close() on the closing side", socket,
             "close-only vs shutdown, helper forked after (the 2.18.1 fix)", "40/40", "0/40"},
            {"or fork the holder before the connection exists", socket,
             "close-only: helper forked after vs before the connection", "40/40", "0/40"},
            {"or close_range() the inherited descriptors in it", socket,
             "close-only: fork-only helper vs helper that close_range()s its descriptors", "40/40", "0/40"}};
  std::vector<Remedy> out;
  for (const auto& e : catalog::entries()) {
    // By entry id, or by a rule id that names the entry alone: not one shared (wait-for), nor a
    // generic shape bound to the entry only in its NCCL range (missing-rank): on the H100 a rank
    // asleep outside NCCL 2.28.9 was told to "upgrade NCCL to 2.28.3 or later".
    const bool by_rule = e.summary_contains.empty() && !e.only_in_affected_range &&
                         std::find(e.rules.begin(), e.rules.end(), key) != e.rules.end();
    if (e.id != key && !by_rule) continue;
    for (const auto& r : e.remedies)
      if (r.measured) out.push_back({r.action, r.report, r.comparison, r.a_hangs, r.b_hangs});
    break;
  }
  return out;
}

}  // namespace hangbench::diagnose
