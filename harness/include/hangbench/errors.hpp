// The errors the harness throws on purpose, and the one mapping from an error to
// the CLI's exit code (README's table; cli/guarded.cpp applies it to every command).
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace hangbench {

// Every error of the harness: what went wrong, and who must act (the exit code).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const = 0;
  // The word in "hangbench COMMAND: <kind>: <message>".
  virtual const char* kind() const = 0;
};

// Bad input: an option, an argument or a file the user named (exit 2). The message
// says which; a file and line, when there is one, are a ConfigError's.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override;
  const char* kind() const override { return "error"; }
};

// A configuration error that names the file (and line) where it sits (exit 2).
class ConfigError : public UsageError {
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

// The machine did not do what was asked: a file that cannot be written, a folder
// that cannot be made or locked, a program that does not start (exit 3).
class InfraError : public Error {
 public:
  using Error::Error;
  int exit_code() const override;
  const char* kind() const override { return "infrastructure error"; }
};

// The exit code of what a command threw: an Error's own; std::invalid_argument
// (bad input to a library function) 2; anything else 3.
int exit_code_of(const std::exception& e);
// "hangbench COMMAND: <kind>: <what>" (COMMAND may be empty), as every command prints it.
std::string error_line(const std::string& command, const std::exception& e);

}  // namespace hangbench
