#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

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

unsigned schedule_flag(SyncMode sync) {
  switch (sync) {
    case SyncMode::Spin:
      return cudaDeviceScheduleSpin;
    case SyncMode::Yield:
      return cudaDeviceScheduleYield;
    case SyncMode::Blocking:
      return cudaDeviceScheduleBlockingSync;
    case SyncMode::Auto:
      break;
  }
  return cudaDeviceScheduleAuto;
}

}  // namespace

DeviceBuffer::DeviceBuffer(int device, int count, SyncMode sync) : count_(count) {
  check(cudaSetDevice(device), "cudaSetDevice");
  // Before the context exists, so that NCCL's own waits in it follow the same rule.
  if (sync != SyncMode::Auto) check(cudaSetDeviceFlags(schedule_flag(sync)), "cudaSetDeviceFlags");
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

bool DeviceBuffer::cumem_supported() const {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver < 12000) return false;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  // The driver's own attributes (the runtime's enum has no VMM entry), from the driver
  // the runtime already loaded; no link against libcuda.
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) return false;
  using GetAttribute = int (*)(int*, int, int);
  auto get_attribute = reinterpret_cast<GetAttribute>(::dlsym(cuda, "cuDeviceGetAttribute"));
  int vmm = 0, rdma = 0;
  const bool read = get_attribute != nullptr &&
                    get_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) == 0 &&
                    get_attribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, device) == 0;
  ::dlclose(cuda);
  return read && vmm != 0 && rdma != 0;
}

}  // namespace hangbench::nccl_teardown
