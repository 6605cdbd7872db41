// The one PATH lookup.
#pragma once

#include <string>

namespace hangbench {

// `name` itself when it holds a '/' and is executable, else the first executable
// DIR/name in $PATH (default /usr/local/bin:/usr/bin:/bin); "" when there is none.
std::string find_executable(const std::string& name);

}  // namespace hangbench
