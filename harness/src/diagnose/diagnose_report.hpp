// What `hangbench diagnose` writes of a diagnosis (diagnose_report.cpp): text (after
// text_header) or JSON with the host's provenance on `out`, and the Markdown and
// Graphviz files when named.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "diagnose/stage_timer.hpp"
#include "hangbench/findings.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

struct ReportOptions {
  bool json = false;
  std::string text_header;                  // e.g. that stored evidence was judged again
  std::vector<std::string> nccl_libraries;  // the live libraries the provenance hashes
  std::string markdown_path, dot_path;      // "" none
};
void write_report(std::ostream& out, const Snapshot& s, const std::vector<Finding>& findings,
                  const ReportOptions& options, StageTimer& timer);

}  // namespace hangbench::diagnose
