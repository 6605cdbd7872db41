// validate --hang: one library against catalog entries (validate_hang.cpp).
#pragma once

#include <string>
#include <vector>

#include "hangbench/validate.hpp"

namespace hangbench::cli {

// `hangs`: entry ids or "all". Returns validate's exit code: 0, 1 (vulnerable to one), 3.
int validate_against_catalog(const validate::Request& design, const std::vector<std::string>& hangs,
                             const std::string& markdown, const std::string& json);

}  // namespace hangbench::cli
