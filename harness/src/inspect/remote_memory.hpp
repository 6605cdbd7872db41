// Reads another process's memory with process_vm_readv (the same permission as
// ptrace attach; the process is not stopped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hangbench::diagnose {

class RemoteMemory {
 public:
  explicit RemoteMemory(int pid) : pid_(pid) {}
  // True when all `size` bytes at `address` were read.
  bool read(std::uint64_t address, void* out, std::size_t size) const;
  template <typename T>
  std::optional<T> value(std::uint64_t address) const {
    T v{};
    if (!read(address, &v, sizeof v)) return std::nullopt;
    return v;
  }
  std::uint64_t pointer(std::uint64_t address) const { return value<std::uint64_t>(address).value_or(0); }
  int last_errno() const { return last_errno_; }

 private:
  int pid_;
  mutable int last_errno_ = 0;
};

}  // namespace hangbench::diagnose
