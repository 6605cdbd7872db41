// The order in which the workload tears down, on both of its exit paths:
//   normal:        teardown_begin, stop progress, free GPU resources, MPI_Finalize, teardown_end
//   hang detected: hang_detected, stop progress, release GPU spin waits,
//                  teardown_begin, teardown_end, MPI_Abort
// In both, the progress thread is stopped before MPI goes away: a thread still
// in MPI_Iprobe while MPI is finalised or aborted is undefined behaviour.
// Only the first path to start runs; a later caller learns that it lost.
// The steps are callables so tests can record their order without MPI or CUDA.
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace pp {

struct ShutdownSteps {
  std::function<void(const std::string&)> mark_phase;          // phase protocol
  std::function<void(const std::string&)> record_hang_reason;  // a metric
  std::function<void()> stop_progress;                         // idempotent, joins the thread
  std::function<void()> release_gpu_waits;                     // hang path: let spin kernels end
  std::function<void()> free_gpu_resources;                    // normal path
  std::function<void()> finalize_mpi;                          // normal path
  std::function<void()> abort_mpi;                             // hang path; may not return
};

class ShutdownSequence {
 public:
  explicit ShutdownSequence(ShutdownSteps steps) : steps_(std::move(steps)) {}

  // Returns false (doing nothing) when a shutdown already started.
  bool run_normal();
  // `reason` is recorded as a metric ("signal SIGTERM", "watchdog 30 s").
  bool run_hang_detected(const std::string& reason);

  bool started() const { return started_.load(); }

 private:
  bool claim() { return !started_.exchange(true); }
  static void call(const std::function<void()>& f) {
    if (f) f();
  }
  void mark(const std::string& phase) const {
    if (steps_.mark_phase) steps_.mark_phase(phase);
  }

  ShutdownSteps steps_;
  std::atomic<bool> started_{false};
};

}  // namespace pp
