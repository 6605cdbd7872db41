// The one place where what a command threw becomes an exit code and a message
// (README's table): bad input of any kind 2, a store that cannot be read or
// written 3, anything else the machine did 3.
#pragma once

#include <functional>
#include <string>

namespace hangbench::cli {

// Runs `body` and returns its exit code; on an exception, prints
// "hangbench COMMAND: <kind>: <what>" to stderr and returns the code of its kind:
// ConfigError, std::invalid_argument (UsageError, EvidenceUsageError) -> 2;
// StoreError -> 3 ("store error"); any other std::exception -> 3 ("infrastructure error").
int guarded(const std::string& command, const std::function<int()>& body);

}  // namespace hangbench::cli
