#include "hangbench/errors.hpp"

#include <utility>

namespace hangbench {

ConfigError::ConfigError(std::string file, int line, const std::string& message)
    // No file: an error about a command-line flag, said without a "matrix:" prefix.
    : std::runtime_error(file.empty() ? message : file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + message),
      file_(std::move(file)),
      line_(line),
      message_(message) {}

}  // namespace hangbench
