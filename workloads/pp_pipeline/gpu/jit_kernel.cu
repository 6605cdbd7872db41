// Compiled separately to a fatbin that pp_pipeline embeds as bytes and loads
// at run time with cuModuleLoadData (see jit_module.cpp). extern "C" keeps the
// symbol name plain for cuModuleGetFunction.
#include <cstddef>

extern "C" __global__ void pp_jit_scale(float* data, unsigned long long elements) {
  const unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  if (i < elements) data[i] *= 0.9999f;
}
