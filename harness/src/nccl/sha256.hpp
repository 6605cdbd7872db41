// SHA-256 of files and strings: pins, patches, cache keys and manifests all
// name content by this hash. One implementation serves the whole harness
// (harness/src/store/sha256.cpp); this adds the NCCL side's stricter file rule.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "hangbench/provenance.hpp"

namespace hangbench::nccl {

inline std::string sha256_hex(std::string_view data) { return hangbench::sha256_hex(data); }

// Throws std::runtime_error when the file cannot be read (a build input that is
// missing is an error here, where provenance merely records an empty hash).
inline std::string sha256_file_hex(const std::string& path) {
  std::string digest = hangbench::sha256_file(path);
  if (digest.empty()) throw std::runtime_error("cannot read " + path);
  return digest;
}

}  // namespace hangbench::nccl
