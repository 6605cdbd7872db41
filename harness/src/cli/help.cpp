#include "cli/help.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace hangbench::cli {
namespace {

// "INT:INT in [1 - 4096]" is the type and its validators' descriptions, ':' apart.
std::vector<std::string> split_type_text(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
    parts.push_back(text.substr(start, colon - start));
  parts.push_back(text.substr(start));
  return parts;
}

// CLI11's names of the types, in words a reader types.
std::string value_word(const std::string& type) {
  if (type == "INT" || type == "UINT") return "N";
  if (type == "FLOAT") return "NUMBER";
  return type;
}

// CLI::IsMember's "{a,b}" as "a|b"; "" for any other description.
std::string choices_of(const std::string& description) {
  if (description.size() < 2 || description.front() != '{' || description.back() != '}') return "";
  std::string words = description.substr(1, description.size() - 2);
  std::replace(words.begin(), words.end(), ',', '|');
  return words;
}

// CLI::Range's "INT in [1 - 4096]" as "1 to 4096"; "" for any other description.
std::string range_of(const std::string& description) {
  const auto open = description.find(" in [");
  const auto dash = description.find(" - ", open == std::string::npos ? 0 : open);
  if (open == std::string::npos || dash == std::string::npos || description.back() != ']') return "";
  return description.substr(open + 5, dash - open - 5) + " to " +
         description.substr(dash + 3, description.size() - dash - 4);
}

// Every "SUBCOMMAND" of CLI11's text as "COMMAND", the word the rest of hangbench uses.
std::string commands_not_subcommands(std::string text) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"SUBCOMMANDS", "COMMANDS"},
                                 {"SUBCOMMAND", "COMMAND"},
                                 {"Subcommands:", "Commands:"}}) {
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  }
  return text;
}

class PlainFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    return commands_not_subcommands(CLI::Formatter::make_usage(app, std::move(name)));
  }
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    return commands_not_subcommands(CLI::Formatter::make_subcommands(app, mode));
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() == 0) return "";
    const auto parts = split_type_text(opt->get_type_name());
    std::string value = value_word(parts.front());
    for (size_t i = 1; i < parts.size(); ++i) {
      if (!choices_of(parts[i]).empty()) value = choices_of(parts[i]);
      if (parts[i] == "FILE" || parts[i] == "DIR" || parts[i] == "PATH(existing)") value = "FILE";
    }
    std::string out = value.empty() ? "" : " " + value;
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size)
      out += " ...";
    else if (opt->get_expected_min() > 1)
      out += " x " + std::to_string(opt->get_expected());
    if (opt->get_required()) out += " (required)";
    return out;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    std::vector<std::string> notes;
    const auto parts = split_type_text(opt->get_type_name());
    for (size_t i = 1; i < parts.size(); ++i) {
      if (!range_of(parts[i]).empty())
        notes.push_back(range_of(parts[i]));
      else if (choices_of(parts[i]).empty() && parts[i] != "FILE" && parts[i] != "DIR" &&
               parts[i].find_first_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos)
        notes.push_back(parts[i]);  // our own validators describe themselves in words
    }
    const std::string fallback = opt->get_default_str();
    if (!fallback.empty() && desc.find("default") == std::string::npos) notes.push_back("default " + fallback);
    std::string joined;
    for (const auto& note : notes) joined += (joined.empty() ? "" : "; ") + note;
    if (joined.empty()) return desc;
    // "trials per library (a fixed design)" ends in its own note: one pair of brackets.
    if (!desc.empty() && desc.back() == ')') return desc.substr(0, desc.size() - 1) + "; " + joined + ")";
    return desc + " (" + joined + ")";
  }
};

// Optimal string alignment distance: edits, a swap of two neighbours counting one.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The names nearest `word` (a typo or a prefix of them), nearest first; none when
// nothing is near.
std::vector<std::string> nearest(const std::string& word, const std::vector<std::string>& names) {
  const auto bare = [](const std::string& s) {
    return s.substr(s.find_first_not_of('-') == std::string::npos ? 0 : s.find_first_not_of('-'));
  };
  const std::string w = bare(word);
  const size_t allowed = w.size() <= 3 ? 1 : 2;
  size_t best = allowed + 1;
  std::vector<std::string> out;
  for (const auto& name : names) {
    const std::string n = bare(name);
    size_t d = edit_distance(w, n);
    if (w.size() >= 3 && n.rfind(w, 0) == 0) d = std::min<size_t>(d, 1);  // a prefix of the name
    if (d < best) {
      best = d;
      out.clear();
    }
    if (d == best && d <= allowed && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::string or_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

std::vector<std::string> command_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : command.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The commands (as "run", "nccl build") that have `option`, anywhere under `app`.
std::vector<std::string> commands_with_option(const CLI::App& app, const std::string& option,
                                              const std::string& prefix) {
  std::vector<std::string> found;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
    const std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    const auto names = option_names(*sub);
    if (std::find(names.begin(), names.end(), option) != names.end()) found.push_back(path);
    for (const auto& deeper : commands_with_option(*sub, option, path)) found.push_back(deeper);
  }
  return found;
}

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<PlainFormatter>(); }

CLI::Validator above_zero(const std::string& unit, const std::string& example) {
  return CLI::Validator(
      [unit, example](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && *end == '\0' && value > 0 && value < 1e300) return "";
        return "'" + text + "' is not allowed: give a number of " + unit + " above 0 (e.g. " + example + ")";
      },
      "above 0");
}

CLI::Validator zero_or_more(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && *end == '\0' && value >= 0 && value < 1e300) return "";
        return "'" + text + "' is not allowed: give " + what + ", 0 or more";
      },
      "0 or more");
}

std::string usage_error_message(const CLI::App& app, const CLI::ParseError& error) {
  // The command the words left over were given to (the first, on the command line,
  // that has some: `hangbench --matrix M run` gave --matrix to hangbench itself),
  // else the deepest one selected.
  const CLI::App* command = &app;
  std::string name = app.get_name().empty() ? "hangbench" : app.get_name();
  while (command->remaining(false).empty() && !command->get_subcommands().empty()) {
    command = command->get_subcommands().front();
    name += " " + command->get_name();
  }
  const std::string help = name + " --help";
  const std::vector<std::string> commands = command_names(*command);
  const std::vector<std::string> words = command->remaining(false);
  // What was left over, first word first: a mistyped option, a mistyped command, or a word too many.
  const auto first = std::find_if(words.begin(), words.end(), [&](const std::string& w) {
    return (w.size() > 1 && w[0] == '-') || (!commands.empty() && !w.empty());
  });
  if (first != words.end() && (*first)[0] != '-') {
    const auto near = nearest(*first, commands);
    std::string all;
    for (const auto& c : commands) all += (all.empty() ? "" : ", ") + c;
    return fmt::format("{}: error: unknown command '{}'{}\n  commands: {} ({} COMMAND --help)", name, *first,
                       near.empty() ? "" : "; did you mean " + or_list(near) + "?", all, name);
  }
  if (first != words.end()) {
    const std::string option = first->substr(0, first->find('='));
    const auto near = nearest(option, option_names(*command));
    std::string elsewhere;  // an option of another command, given to this one (or before the command)
    if (near.empty()) {
      for (const std::string& other : commands_with_option(app, option, "")) {
        elsewhere += (elsewhere.empty() ? "" : ", ") + std::string("hangbench ") + other;
      }
    }
    if (!elsewhere.empty()) {
      return fmt::format("{}: error: unknown option {}: it is an option of {} (options go after their command)", name,
                         option, elsewhere);
    }
    return fmt::format("{}: error: unknown option {}{}\n  ({} lists every option)", name, option,
                       near.empty() ? "" : "; did you mean " + or_list(near) + "?", help);
  }
  if (!words.empty()) {
    std::string all;
    for (const auto& w : words) all += (all.empty() ? "" : " ") + w;
    return fmt::format("{}: error: unexpected argument{} '{}'\n  ({} shows what it takes)", name,
                       words.size() == 1 ? "" : "s", all, help);
  }
  if (!commands.empty() && command->get_require_subcommand_min() > 0) {
    std::string all;
    for (const auto& c : commands) all += (all.empty() ? "" : ", ") + c;
    return fmt::format("{}: error: give a command: {}\n  ({} COMMAND --help)", name, all, name);
  }
  // CLI11's own words for a value it could not take, said plainly: "--trials: 'abc' is not a whole number".
  const std::string what = error.what();
  const CLI::Option* option = nullptr;
  for (const CLI::Option* o : command->get_options()) {
    const std::string long_name = o->get_lnames().empty() ? "" : "--" + o->get_lnames().front();
    if (!long_name.empty() &&
        (what.find(" " + long_name + " ") != std::string::npos || what.rfind(long_name + ":", 0) == 0))
      option = o;
  }
  if (option != nullptr && dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    const std::string type = split_type_text(option->get_type_name()).front();
    const std::string value = what.substr(what.rfind(" = ") == std::string::npos ? what.size() : what.rfind(" = ") + 3);
    return fmt::format("{}: error: --{}: '{}' is not {}\n  ({})", name, option->get_lnames().front(), value,
                       type == "INT" || type == "UINT" ? "a whole number"
                       : type == "FLOAT"               ? "a number"
                                                       : "allowed",
                       help);
  }
  if (option != nullptr && dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    return fmt::format("{}: error: --{} needs a value: {}\n  ({})", name, option->get_lnames().front(),
                       option->get_description(), help);
  }
  return fmt::format("{}: error: {}\n  ({})", name, what, help);
}

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
