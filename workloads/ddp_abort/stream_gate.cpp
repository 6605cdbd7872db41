#include "stream_gate.hpp"

#include <chrono>

namespace hangbench::ddp {

void StreamGate::close_on(CudaRuntime::Stream stream) {
  CudaRuntime::get().launch_host_func(stream, &StreamGate::hold, this);
}

void StreamGate::release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
  }
  cv_.notify_all();
}

// Runs on CUDA's callback thread; it may block, but must not call CUDA.
void StreamGate::hold(void* self) {
  auto* gate = static_cast<StreamGate*>(self);
  std::unique_lock<std::mutex> lock(gate->mutex_);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(gate->safety_release_s_));
  if (!gate->cv_.wait_until(lock, deadline, [gate] { return gate->open_; })) {
    gate->safety_fired_ = true;
    gate->open_ = true;
  }
}

}  // namespace hangbench::ddp
