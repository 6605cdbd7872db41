// The one place where what a command threw becomes an exit code and a message
// (README's table, through base's exit_code_of): bad input of any kind 2, a store
// that cannot be read or written 3, anything else the machine did 3.
#pragma once

#include <functional>
#include <string>

namespace hangbench::cli {

// Runs `body` and returns its exit code; on an exception, prints
// "hangbench COMMAND: <kind>: <what>" to stderr and returns its exit_code_of
// (hangbench/errors.hpp): UsageError, ConfigError, StoreInputError and
// std::invalid_argument 2 ("error"); StoreError 3 ("store error"); InfraError and
// any other std::exception 3 ("infrastructure error").
int guarded(const std::string& command, const std::function<int()>& body);

}  // namespace hangbench::cli
