#include "cli/guarded.hpp"

#include <iostream>
#include <stdexcept>

#include "hangbench/errors.hpp"

namespace hangbench::cli {

int guarded(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << error_line(command, e) << "\n";
    return exit_code_of(e);
  }
}

}  // namespace hangbench::cli
