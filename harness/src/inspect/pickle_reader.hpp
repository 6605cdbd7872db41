// Plain pickles (dicts, lists, tuples, str, int, float, bool, None) as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hangbench::diagnose {

// Throws std::invalid_argument saying what is wrong (truncated, unsupported opcode).
nlohmann::json unpickle_plain(const std::string& bytes);

}  // namespace hangbench::diagnose
