#include "mapped_release_flag.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace pp::gpu {

MappedReleaseFlag::MappedReleaseFlag(pp::ReleaseFlag flag) : flag_(std::move(flag)) {
  cudaError_t rc = cudaHostRegister(flag_.words(), flag_.mapped_bytes(), cudaHostRegisterMapped);
  if (rc != cudaSuccess) {
    throw std::runtime_error("cudaHostRegister(" + flag_.name() + ", mapped): " + cudaGetErrorString(rc));
  }
  void* device = nullptr;
  rc = cudaHostGetDevicePointer(&device, flag_.words(), 0);
  if (rc != cudaSuccess) {
    cudaHostUnregister(flag_.words());
    throw std::runtime_error(std::string("cudaHostGetDevicePointer: ") + cudaGetErrorString(rc));
  }
  device_words_ = static_cast<pp::ReleaseWords*>(device);
}

MappedReleaseFlag::~MappedReleaseFlag() { cudaHostUnregister(flag_.words()); }

}  // namespace pp::gpu
