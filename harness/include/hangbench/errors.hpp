// The errors every layer throws and the CLI turns into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace hangbench {

// A configuration error that names where it sits; the CLI exits with code 2.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }  // 0 when no line applies
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
};

}  // namespace hangbench
