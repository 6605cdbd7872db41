// The JSON form of a diagnosis: the snapshot, the findings, the wait-for graph and
// the headline (schema: docs/evidence.md).
#include "hangbench/headline.hpp"
#include "hangbench/render.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

nlohmann::json diagnosis_json(const Snapshot& s, const std::vector<Finding>& findings) {
  nlohmann::json j = to_json(s);
  j["findings"] = nlohmann::json::array();
  for (const auto& f : findings) {
    // Who waits, who holds it and what to do, as fields: the same facts the headline says in words.
    nlohmann::json waiter = nullptr, holders = nlohmann::json::array(), remedies = nlohmann::json::array();
    if (!f.pids.empty()) {
      waiter = {{"pid", f.pids.front()}};
      if (!f.tids.empty()) waiter["tid"] = f.tids.front();
      if (const auto* p = s.find(f.pids.front()); p && p->rank >= 0) waiter["rank"] = p->rank;
      if (const auto* p = s.find(f.pids.front()); p && !f.tids.empty())
        if (std::string name = python_thread_name(*p, f.tids.front()); !name.empty()) waiter["python_name"] = name;
      for (std::size_t i = 1; i < f.pids.size(); ++i) holders.push_back(f.pids[i]);
    }
    for (const auto& r : remedies_for(f.catalog.empty() ? f.rule : f.catalog))
      remedies.push_back({{"action", r.action},
                          {"report", r.report},
                          {"comparison", r.comparison},
                          {"a_hangs", r.a_hangs},
                          {"b_hangs", r.b_hangs}});
    j["findings"].push_back({{"rule", f.rule},
                             {"title", f.title},
                             {"severity", to_string(f.severity)},
                             {"summary", f.summary},
                             {"facts", f.facts},
                             {"pids", f.pids},
                             {"tids", f.tids},
                             {"ranks", f.ranks},
                             {"waiter", waiter},
                             {"holders", holders},
                             {"remedies", remedies},
                             {"catalog", f.catalog}});
  }
  j["graph"] = graph_json(build_wait_graph(s));
  j["headline"] = headline_lines(s, findings);
  j["holder_sentences"] = holder_sentences(s);
  j["summary"] = summary_paragraph(s, findings);
  return j;
}

}  // namespace hangbench::diagnose
