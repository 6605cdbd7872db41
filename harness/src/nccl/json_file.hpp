// A JSON file read without exceptions: a missing or malformed file is a discarded value.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace hangbench::nccl {

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace hangbench::nccl
