// The words of the single-GPU release page, shared by the host code (C++20)
// and the spin kernel (compiled as CUDA C++17): plain layout, no library types.
#pragma once

#include <cstdint>

namespace pp {

struct ReleaseWords {
  std::uint64_t released_steps;  // receiver: how many steps' receives are "posted"
  std::uint64_t abort;           // sender, hang path: non-zero ends every spin at once
  std::uint64_t spin_started;    // kernel: step + 1 when it begins to wait (for logs)
  std::uint64_t reserved;
};

}  // namespace pp
