// One factory per output format; make_exporter() (summary.hpp) picks among them.
#pragma once

#include <memory>

#include "hangbench/summary.hpp"

namespace hangbench::report {

std::unique_ptr<Exporter> make_terminal_exporter();
std::unique_ptr<Exporter> make_markdown_exporter();
std::unique_ptr<Exporter> make_json_exporter();
std::unique_ptr<Exporter> make_csv_exporter();
std::unique_ptr<Exporter> make_junit_exporter();
std::unique_ptr<Exporter> make_html_exporter();

}  // namespace hangbench::report
