// The code the executor touches for the first time while the activation send
// is in flight. Two ways, as a PP runtime meets them:
//   launch_cold_kernel: a kernel in its own translation unit (cold_kernel.cu),
//     hence its own module; under CUDA_MODULE_LOADING=LAZY its first launch
//     loads that module, which waits for running kernels to finish.
//   load_and_launch_jit_module: cuModuleLoadData of a fatbin embedded in the
//     binary + cuModuleGetFunction + cuLaunchKernel, as JIT kernel libraries do;
//     a module load waits under EAGER as well.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace pp::gpu {

cudaError_t launch_cold_kernel(float* data, std::size_t elements, cudaStream_t stream);

// Throws std::runtime_error naming the failing driver call.
void load_and_launch_jit_module(float* data, std::size_t elements, cudaStream_t stream);

}  // namespace pp::gpu
