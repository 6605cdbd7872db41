#include "cli.hpp"

#include <iostream>

#include "workload_exit_codes.hpp"

namespace hangbench::workload {
namespace {

// Names what CLI11 left over: an unknown option, or a positional argument.
std::string stray_argument_reason(const std::string& argument) {
  if (argument.rfind("--", 0) == 0) {
    const std::string option = argument.substr(0, argument.find('='));
    return "unknown argument '" + argument + "' (unknown option " + option + ")";
  }
  return "expected --name=value, got '" + argument + "'";
}

}  // namespace

Cli::Cli(std::string name, const std::string& description) : name_(std::move(name)), app_(description, name_) {
  // Leftovers are reported by parse() in the workloads' own words; a repeated
  // option keeps every value so that parse() can say "given twice".
  app_.allow_extras();
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_.footer(workload_exit::kSummary);
}

CliResult Cli::parse(const std::vector<std::string>& args, const std::function<void()>& check) {
  CliResult result;
  auto usage_error = [&](const std::string& reason) {
    result.exit_code = workload_exit::kUsage;
    result.message = name_ + ": " + reason + " (see --help)";
    return result;
  };
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app_.parse(reversed);
    for (const CLI::Option* option : app_.get_options()) {
      if (option->count() > 1 && option->get_expected_max() == 1) {
        return usage_error(option->get_name() + " given twice");
      }
    }
    if (!app_.remaining().empty()) return usage_error(stray_argument_reason(app_.remaining().front()));
    if (check) check();
  } catch (const CLI::CallForHelp&) {
    result.message = app_.help();
    return result;
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  result.run = true;
  return result;
}

void print(const CliResult& result) {
  if (result.exit_code == 0) {
    std::cout << result.message;
  } else {
    std::cerr << result.message << "\n";
  }
}

std::vector<std::string> arguments(int argc, char** argv) { return std::vector<std::string>(argv + 1, argv + argc); }

}  // namespace hangbench::workload
