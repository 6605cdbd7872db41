// Releases in numeric order: 2.9.x < 2.13.4 < 2.25.1 < 2.25.1.post1; unknown last.
#pragma once

#include <string>

namespace hangbench::sweep {

bool release_less(const std::string& a, const std::string& b);

}  // namespace hangbench::sweep
