// Holds a CUDA stream at a host function until released. A collective queued
// behind the gate cannot start, so it times out the way one waiting for a
// missing peer does, without a custom kernel (no nvcc needed).
//
// NCCL's teardown drains its internal streams, which wait on the user stream, so
// the gate must open when the abort begins (like a stuck NCCL kernel that quits
// on the abort flag); a safety deadline opens it in any case.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "cuda_runtime.hpp"

namespace hangbench::ddp {

class StreamGate {
 public:
  explicit StreamGate(double safety_release_s) : safety_release_s_(safety_release_s) {}
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Enqueues the holding host function on `stream`. The gate must outlive it.
  void close_on(CudaRuntime::Stream stream);
  void release();  // idempotent, any thread
  bool opened_by_safety_deadline() const { return safety_fired_.load(); }

 private:
  static void hold(void* self);

  const double safety_release_s_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  std::atomic<bool> safety_fired_{false};
};

}  // namespace hangbench::ddp
