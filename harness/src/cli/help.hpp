// What `--help` teaches besides the options: examples to copy, the exit codes a
// script can test, and where the docs are. One footer per command, one format.
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
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

// The formatter of every command's --help (set on the app before its commands):
// an option's value in words (N, NUMBER, TEXT, FILE, or its choices "a|b"), its
// default and allowed range at the end of its description; never CLI11's type
// text ("INT:INT in [1 - 4096]", "FLOAT:POSITIVE", "ddp|teardown=teardown").
std::shared_ptr<CLI::Formatter> help_formatter();

// A number option that must be above 0 (or at least 0), refused in words:
// "--timeout: 0 is not allowed: give a number of seconds above 0 (e.g. 20)".
CLI::Validator above_zero(const std::string& unit, const std::string& example);
CLI::Validator zero_or_more(const std::string& what);

// What a command line CLI11 refused is told: an unknown command or option with
// the nearest names ("did you mean") and the commands there are, a missing
// command with the list, else CLI11's message; always "hangbench CMD: error: ..."
// and the --help to read.
std::string usage_error_message(const CLI::App& app, const CLI::ParseError& error);

// An option whose values are words mapped to an enum: help shows the words
// ("teardown|ddp"), not CLI11's mapping table.
// A word that is not one of them is refused in words: "'sometimes' is not one of ddp, teardown".
template <typename Enum>
CLI::Option* words_option(CLI::App* command, const std::string& name, Enum& value,
                          const std::map<std::string, Enum>& words, const std::string& description) {
  std::string names, listed;
  for (const auto& [word, unused] : words) {
    names += (names.empty() ? "" : "|") + word;
    listed += (listed.empty() ? "" : ", ") + word;
  }
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  CLI::Validator to_value(
      [words, listed, lower](std::string& text) -> std::string {
        for (const auto& [word, mapped] : words) {
          if (lower(word) != lower(text)) continue;
          text = std::to_string(static_cast<std::underlying_type_t<Enum>>(mapped));
          return "";
        }
        return "'" + text + "' is not one of " + listed;
      },
      "");
  return command->add_option(name, value, description)->transform(to_value)->type_name(names);
}

}  // namespace hangbench::cli
