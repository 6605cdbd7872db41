#include "hangbench/errors.hpp"

#include <utility>

#include "hangbench/exit_codes.hpp"

namespace hangbench {

int UsageError::exit_code() const { return exit_code::kUsage; }
int InfraError::exit_code() const { return exit_code::kInfra; }

ConfigError::ConfigError(std::string file, int line, const std::string& message)
    // No file: an error about a command-line flag, said without a "matrix:" prefix.
    : UsageError(file.empty() ? message : file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message),
      file_(std::move(file)),
      line_(line),
      message_(message) {}

int exit_code_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return error->exit_code();
  if (dynamic_cast<const std::invalid_argument*>(&e)) return exit_code::kUsage;
  return exit_code::kInfra;
}

std::string error_line(const std::string& command, const std::exception& e) {
  const char* kind = "infrastructure error";
  if (const auto* error = dynamic_cast<const Error*>(&e))
    kind = error->kind();
  else if (dynamic_cast<const std::invalid_argument*>(&e))
    kind = "error";
  return (command.empty() ? "hangbench: " : "hangbench " + command + ": ") + kind + ": " + e.what();
}

}  // namespace hangbench
