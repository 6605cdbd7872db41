// The command line of every workload: CLI11 with one contract, so that each
// workload's options file only declares its options.
//   --help          -> the help text, exit 0
//   a usage error   -> one line "NAME: reason (see --help)", exit 2
// Options take "--name=value" or "--name value"; an option given twice, an
// unknown option and a stray argument are usage errors.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hangbench::workload {

// Thrown by a workload's own checks (in an option's callback or after parsing)
// for input that CLI11 accepts but the run cannot use. The text is the reason,
// without the program's name.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CliResult {
  bool run = false;     // true: the options are set, go on
  int exit_code = 0;    // when !run: 0 after --help, workload_exit::kUsage after an error
  std::string message;  // when !run: the help text, or "NAME: reason (see --help)"
};

class Cli {
 public:
  Cli(std::string name, const std::string& description);

  CLI::App& app() { return app_; }

  // args excludes argv[0]. `check` runs after a successful parse and may throw UsageError.
  CliResult parse(const std::vector<std::string>& args, const std::function<void()>& check = {});

 private:
  std::string name_;
  CLI::App app_;
};

// Prints a result that ends the run: help on stdout, an error on stderr.
void print(const CliResult& result);

std::vector<std::string> arguments(int argc, char** argv);  // argv without argv[0]

}  // namespace hangbench::workload
