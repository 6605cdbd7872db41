// An ncclUniqueId as 256 hex digits: how a rank that starts the others hands
// them the id on their command line.
#pragma once

#include <string>

#include "nccl_loader.hpp"

namespace hangbench::workload {

inline std::string unique_id_to_hex(const nccl_abi::ncclUniqueId& id) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : id.internal) {
    const auto byte = static_cast<unsigned char>(c);
    out += digits[byte >> 4];
    out += digits[byte & 15];
  }
  return out;
}

// The caller has checked the length (256).
inline nccl_abi::ncclUniqueId unique_id_from_hex(const std::string& hex) {
  nccl_abi::ncclUniqueId id{};
  for (size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return id;
}

}  // namespace hangbench::workload
