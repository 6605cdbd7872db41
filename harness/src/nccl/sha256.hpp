// SHA-256 of files and strings: pins, patches, cache keys and manifests all
// name content by this hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hangbench::nccl {

std::string sha256_hex(std::string_view data);
// Throws std::runtime_error when the file cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace hangbench::nccl
