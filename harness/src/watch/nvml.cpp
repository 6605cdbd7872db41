// GPU activity of the job's processes through NVML, loaded with dlopen: a CPU
// machine has no libnvidia-ml.so.1, and hangbench must not need one to start.
#include <dlfcn.h>

#include <algorithm>
#include <vector>

#include "hangbench/watch.hpp"

namespace hangbench::watch {

namespace nvml_abi {

// NVML's own types, as nvml.h declares them (a stable C ABI).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned int smUtil, memUtil, encUtil, decUtil;
};
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kNotFound = 6;  // no samples since lastSeenTimeStamp
constexpr nvmlReturn_t kInsufficientSize = 7;

}  // namespace nvml_abi
using nvml_abi::kInsufficientSize;
using nvml_abi::kNotFound;
using nvml_abi::kSuccess;
using nvml_abi::nvmlDevice_t;
using nvml_abi::nvmlProcessUtilizationSample_t;
using nvml_abi::nvmlReturn_t;

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*device_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*process_utilization)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*,
                                      unsigned long long) = nullptr;
  std::vector<nvmlDevice_t> devices;
};

Nvml::Nvml() : api_(std::make_unique<Api>()) {
  handle_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle_) return;
  auto sym = [&](const char* name) { return ::dlsym(handle_, name); };
  api_->init = reinterpret_cast<decltype(api_->init)>(sym("nvmlInit_v2"));
  api_->shutdown = reinterpret_cast<decltype(api_->shutdown)>(sym("nvmlShutdown"));
  api_->device_count = reinterpret_cast<decltype(api_->device_count)>(sym("nvmlDeviceGetCount_v2"));
  api_->device_by_index = reinterpret_cast<decltype(api_->device_by_index)>(sym("nvmlDeviceGetHandleByIndex_v2"));
  api_->process_utilization =
      reinterpret_cast<decltype(api_->process_utilization)>(sym("nvmlDeviceGetProcessUtilization"));
  unsigned int count = 0;
  if (!api_->init || !api_->shutdown || !api_->device_count || !api_->device_by_index || !api_->process_utilization ||
      api_->init() != kSuccess) {
    ::dlclose(handle_);
    handle_ = nullptr;
    return;
  }
  if (api_->device_count(&count) == kSuccess) {
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t d = nullptr;
      if (api_->device_by_index(i, &d) == kSuccess) api_->devices.push_back(d);
    }
  }
}

Nvml::~Nvml() {
  if (!handle_) return;
  api_->shutdown();
  ::dlclose(handle_);
}

std::optional<bool> Nvml::any_busy(const std::vector<int>& pids) {
  if (!handle_) return std::nullopt;
  bool busy = false;
  unsigned long long newest = last_seen_us_;
  for (nvmlDevice_t d : api_->devices) {
    unsigned int n = 0;
    nvmlReturn_t r = api_->process_utilization(d, nullptr, &n, last_seen_us_);
    if (r == kNotFound || (r != kInsufficientSize && r != kSuccess) || n == 0) continue;
    std::vector<nvmlProcessUtilizationSample_t> samples(n);
    if (api_->process_utilization(d, samples.data(), &n, last_seen_us_) != kSuccess) continue;
    for (unsigned int i = 0; i < n && i < samples.size(); ++i) {
      const auto& s = samples[i];
      newest = std::max(newest, s.timeStamp);
      const bool ours = std::find(pids.begin(), pids.end(), static_cast<int>(s.pid)) != pids.end();
      if (ours && (s.smUtil > 0 || s.memUtil > 0)) busy = true;
    }
  }
  last_seen_us_ = newest;
  return busy;
}

}  // namespace hangbench::watch
