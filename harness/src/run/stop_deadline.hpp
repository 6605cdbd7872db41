// The harness's own end is bounded: once it is told to stop (SIGINT, SIGTERM),
// it has the trials' grace and a little more to clean up, record and report;
// past that it leaves at once with exit 3, as systemd's stop timeout would make
// it. Its trials then die by the kernel's hand or the watcher's (docs/lifecycle.md),
// and the store (one committed row per trial) stays resumable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace hangbench::run_detail {

class StopDeadline {
 public:
  // Watches `cancel` (may be null: then it does nothing); `bound_s` after it is set,
  // writes why to stderr and _exit(3)s unless disarmed first.
  StopDeadline(const std::atomic<bool>* cancel, double bound_s);
  ~StopDeadline();  // disarms
  StopDeadline(const StopDeadline&) = delete;
  StopDeadline& operator=(const StopDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::thread thread_;
};

}  // namespace hangbench::run_detail
