#include <functional>
#include <utility>
#include <vector>

#include "hangbench/summary.hpp"
#include "report/exporters.hpp"

namespace hangbench {
namespace {

using Factory = std::unique_ptr<Exporter> (*)();

const std::vector<std::pair<std::string, Factory>>& factories() {
  static const std::vector<std::pair<std::string, Factory>> all = {
      {"terminal", report::make_terminal_exporter}, {"markdown", report::make_markdown_exporter},
      {"json", report::make_json_exporter},         {"csv", report::make_csv_exporter},
      {"junit", report::make_junit_exporter},       {"html", report::make_html_exporter},
  };
  return all;
}

}  // namespace

std::unique_ptr<Exporter> make_exporter(const std::string& format) {
  for (const auto& [name, factory] : factories())
    if (name == format) return factory();
  return nullptr;
}

std::vector<std::string> exporter_formats() {
  std::vector<std::string> names;
  for (const auto& entry : factories()) names.push_back(entry.first);
  return names;
}

}  // namespace hangbench
