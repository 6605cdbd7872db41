// The JSON form of a diagnosis: the snapshot, the findings, the wait-for graph and
// the headline (schema: docs/evidence.md).
#include "hangbench/diagnose.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

nlohmann::json diagnosis_json(const Snapshot& s, const std::vector<Finding>& findings) {
  nlohmann::json j = to_json(s);
  j["findings"] = nlohmann::json::array();
  for (const auto& f : findings)
    j["findings"].push_back({{"rule", f.rule},
                             {"title", f.title},
                             {"severity", f.severity},
                             {"summary", f.summary},
                             {"facts", f.facts},
                             {"pids", f.pids},
                             {"tids", f.tids},
                             {"ranks", f.ranks},
                             {"catalog", f.catalog}});
  j["graph"] = graph_json(build_wait_graph(s));
  j["headline"] = headline_lines(s, findings);
  j["holder_sentences"] = holder_sentences(s);
  j["summary"] = summary_paragraph(s, findings);
  return j;
}

}  // namespace hangbench::diagnose
