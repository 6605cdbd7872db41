#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "device_buffer.hpp"

namespace hangbench::nccl_teardown {
namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc) + " (CUDA error " +
                             std::to_string(static_cast<int>(rc)) + ")");
  }
}

}  // namespace

DeviceBuffer::DeviceBuffer(int device, int count) : count_(count) {
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  architecture_ = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = stream;
  check(cudaMalloc(&data_, sizeof(float) * static_cast<size_t>(count)), "cudaMalloc");
}

// Freed only on the healthy path: after a hung teardown the process is killed.
DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void DeviceBuffer::upload(const std::vector<float>& values) {
  check(cudaMemcpyAsync(data_, values.data(), sizeof(float) * values.size(), cudaMemcpyHostToDevice,
                        static_cast<cudaStream_t>(stream_)),
        "cudaMemcpyAsync to the device");
  synchronize();
}

std::vector<float> DeviceBuffer::download() {
  std::vector<float> values(static_cast<size_t>(count_));
  check(cudaMemcpyAsync(values.data(), data_, sizeof(float) * values.size(), cudaMemcpyDeviceToHost,
                        static_cast<cudaStream_t>(stream_)),
        "cudaMemcpyAsync to the host");
  synchronize();
  return values;
}

void DeviceBuffer::synchronize() {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

}  // namespace hangbench::nccl_teardown
