#include "cli/help.hpp"

#include <fmt/format.h>

namespace hangbench::cli {

std::string render_help_footer(const CommandHelp& help) {
  std::string out;
  if (!help.examples.empty()) {
    out += "Examples:\n";
    for (const auto& [line, what] : help.examples) out += fmt::format("  {}\n      {}\n", line, what);
  }
  if (!help.exit_codes.empty()) {
    out += "Exit codes:\n";
    for (const auto& [code, meaning] : help.exit_codes) out += fmt::format("  {}  {}\n", code, meaning);
  }
  if (!help.docs.empty()) out += "Docs: " + help.docs + "\n";
  return out;
}

void set_help(CLI::App* command, const CommandHelp& help) { command->footer(render_help_footer(help)); }

}  // namespace hangbench::cli
