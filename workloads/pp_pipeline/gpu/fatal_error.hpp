// How a stage gives up. Any part of the run throws FatalError; main logs it and
// passes its exit code (workloads/common/workload_exit_codes.hpp) to MPI_Abort, because
// a rank that merely returned would leave the others waiting for it for ever.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "workload_exit_codes.hpp"

namespace pp::gpu {

inline constexpr int kExitUsage = hangbench::workload_exit::kUsage;
inline constexpr int kExitInfra = hangbench::workload_exit::kInfrastructure;
inline constexpr int kExitHang = hangbench::workload_exit::kHangDetected;

// An error that ends the whole job: every rank must go, or the others hang.
struct FatalError {
  int exit_code;
  std::string message;
};

// A CUDA runtime call that failed: the GPU is unusable, an infrastructure error.
inline void cuda_check(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw FatalError{kExitInfra, what + ": " + cudaGetErrorString(rc)};
}

}  // namespace pp::gpu
