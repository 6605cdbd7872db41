// The few CUDA calls nccl_teardown makes: a device, a stream, a buffer to all-reduce.
// Built against CUDA's static runtime when the toolkit is there; otherwise every
// call throws, and only --no-device-memory runs work.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "options.hpp"
#include "workload_main.hpp"

namespace hangbench::nccl_teardown {

class DeviceBuffer {
 public:
  // Selects `device`, makes a stream and `count` floats on it. Throws
  // std::runtime_error naming the CUDA error (no GPU, no driver, ...).
  DeviceBuffer(int device, int count, SyncMode sync = SyncMode::Auto);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  void* stream() const { return stream_; }
  int count() const { return count_; }
  void upload(const std::vector<float>& values);
  std::vector<float> download();
  void synchronize();
  // "sm_90": the compute capability of the selected device.
  std::string architecture() const { return architecture_; }
  // What NCCL's cuMem auto-detection (NCCL_CUMEM_ENABLE unset, 2.19 on) reads: a 12.0+
  // driver whose device supports virtual memory management and GPUDirect RDMA with it.
  // Without cuMem, 2.22.3 on connects at init, whatever NCCL_RUNTIME_CONNECT says.
  bool cumem_supported() const;

 private:
  void* data_ = nullptr;
  void* stream_ = nullptr;
  int count_ = 0;
  std::string architecture_;
};

// A rank's device step: the buffer, or InfraError (exit 3) when CUDA refuses, so that a
// machine without a usable GPU reads as infrastructure, never as a hang or a pass.
inline std::unique_ptr<DeviceBuffer> open_device_buffer(int device, int count, SyncMode sync = SyncMode::Auto) {
  try {
    return std::make_unique<DeviceBuffer>(device, count, sync);
  } catch (const std::exception& e) {
    throw workload::InfraError(e.what());
  }
}

}  // namespace hangbench::nccl_teardown
