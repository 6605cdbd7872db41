#include "run/stop_deadline.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "hangbench/model.hpp"

namespace hangbench::run_detail {

StopDeadline::StopDeadline(const std::atomic<bool>* cancel, double bound_s) {
  if (!cancel) return;
  thread_ = std::thread([this, cancel, bound_s] {
    std::unique_lock lock(mutex_);
    // The flag is set by a signal handler, which cannot notify: look every 50 ms.
    while (!disarmed_ && !cancel->load()) wake_.wait_for(lock, std::chrono::milliseconds(50));
    if (disarmed_) return;
    if (wake_.wait_for(lock, std::chrono::duration<double>(bound_s), [this] { return disarmed_; })) return;
    std::string message = "hangbench: still cleaning up " + std::to_string(bound_s) +
                          " s after it was told to stop; leaving now (the trials in flight end with it; continue "
                          "with run --resume)\n";
    ssize_t ignored = ::write(STDERR_FILENO, message.data(), message.size());
    (void)ignored;
    ::_exit(exit_code::kInfra);
  });
}

StopDeadline::~StopDeadline() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    disarmed_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace hangbench::run_detail
