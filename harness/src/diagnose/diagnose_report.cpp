// What `hangbench diagnose` writes of a diagnosis: the rendering asked for (render
// layer), with the host's provenance in the JSON form, and the files named.
#include "diagnose/diagnose_report.hpp"

#include "hangbench/atomic_write.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/render.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

void write_report(std::ostream& out, const Snapshot& s, const std::vector<Finding>& findings,
                  const ReportOptions& options, StageTimer& timer) {
  if (options.json) {
    nlohmann::json doc = diagnosis_json(s, findings);
    auto provenance = provenance_json(collect_host_provenance(options.nccl_libraries));
    timer.mark("provenance");
    doc["provenance"] = nlohmann::json::parse(provenance.dump());
    out << doc.dump(2) << "\n";
  } else {
    out << options.text_header << render_text(s, findings);
  }
  if (!options.markdown_path.empty()) write_file_atomically(options.markdown_path, render_markdown(s, findings));
  if (!options.dot_path.empty()) write_file_atomically(options.dot_path, graph_dot(build_wait_graph(s), false));
  out << std::flush;
  timer.mark("render");
  timer.total();
}

}  // namespace hangbench::diagnose
