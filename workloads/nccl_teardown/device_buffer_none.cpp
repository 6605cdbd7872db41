// Built without the CUDA toolkit: the workload still runs with --no-device-memory.
#include <stdexcept>

#include "device_buffer.hpp"

namespace hangbench::nccl_teardown {

DeviceBuffer::DeviceBuffer(int, int, SyncMode) {
  throw std::runtime_error("this nccl_teardown was built without CUDA (configure with HANGBENCH_WITH_CUDA=ON)");
}
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::upload(const std::vector<float>&) {}
std::vector<float> DeviceBuffer::download() { return {}; }
void DeviceBuffer::synchronize() {}
bool DeviceBuffer::cumem_supported() const { return false; }

}  // namespace hangbench::nccl_teardown
