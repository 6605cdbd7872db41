// Kernels whose module is loaded during start-up (spin_kernels.cu): the spin
// that stands in for an in-flight NCCL send, and the per-stage compute.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "release_words.hpp"

namespace pp::gpu {

// Launches one thread that spins until words->released_steps > step or
// words->abort != 0. `words` is a device pointer to host-mapped memory;
// nullptr returns at once (the start-up launch that loads the module).
cudaError_t launch_spin_until_released(const pp::ReleaseWords* words, std::uint64_t step,
                                       cudaStream_t stream);

// y = 0.5 * y + stage: a cheap stand-in for a stage's layers.
cudaError_t launch_stage_compute(float* activation, std::size_t elements, int stage,
                                 cudaStream_t stream);

}  // namespace pp::gpu
