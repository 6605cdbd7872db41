// What `--help` teaches besides the options: examples to copy, the exit codes a
// script can test, and where the docs are. One footer per command, one format.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hangbench::cli {

struct CommandHelp {
  std::vector<std::pair<std::string, std::string>> examples;  // command line, what it does
  std::vector<std::pair<int, std::string>> exit_codes;        // code, what it means for this command
  std::string docs;                                           // "docs/matrix.md" etc.
};

// "Examples:", "Exit codes:" and "Docs:" blocks, as set on a command's footer.
std::string render_help_footer(const CommandHelp& help);
void set_help(CLI::App* command, const CommandHelp& help);

// An option whose values are words mapped to an enum: help shows the words
// ("teardown|ddp"), not CLI11's mapping table.
template <typename Enum>
CLI::Option* words_option(CLI::App* command, const std::string& name, Enum& value,
                          const std::map<std::string, Enum>& words, const std::string& description) {
  std::string names;
  for (const auto& [word, unused] : words) names += (names.empty() ? "" : "|") + word;
  return command->add_option(name, value, description)
      ->transform(CLI::CheckedTransformer(words, CLI::ignore_case).description(""))
      ->type_name(names);
}

}  // namespace hangbench::cli
