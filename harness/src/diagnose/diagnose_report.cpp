// What `hangbench diagnose` writes of a diagnosis, and where its time went: below
// the CLI, which only parses its options and calls diagnose() and write_report().
#include <fmt/format.h>

#include <iostream>

#include "hangbench/atomic_write.hpp"
#include "hangbench/clock.hpp"
#include "hangbench/diagnose.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

StageTimer::StageTimer(bool enabled) : enabled_(enabled), last_(monotonic_seconds()), first_(last_) {}

void StageTimer::mark(const std::string& stage) {
  const double now = monotonic_seconds();
  print(stage, now - last_);
  last_ = now;
}

void StageTimer::print(const std::string& stage, double seconds) const {
  if (enabled_) std::cerr << fmt::format("timings: {:<10} {:.3f} s\n", stage, seconds);
}

void StageTimer::total() { print("total", monotonic_seconds() - first_); }

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
