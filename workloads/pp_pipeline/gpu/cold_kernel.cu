// Nothing else lives in this translation unit: its module must stay unloaded
// until the executor's cold call.
#include "cold_kernel.cuh"

namespace pp::gpu {
namespace {

__global__ void cold_scale(float* data, std::size_t elements) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < elements) data[i] *= 1.0001f;
}

}  // namespace

cudaError_t launch_cold_kernel(float* data, std::size_t elements, cudaStream_t stream) {
  const unsigned threads = 256;
  const auto blocks = static_cast<unsigned>((elements + threads - 1) / threads);
  cold_scale<<<blocks, threads, 0, stream>>>(data, elements);
  return cudaGetLastError();
}

}  // namespace pp::gpu
