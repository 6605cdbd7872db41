// The axis of the workload: the thread, if any, that enters MPI while the
// executor is busy, so that a rendezvous send this stage posted can complete.
//   --progress=none   no thread: the send moves only when the executor calls MPI
//   --progress=pump   a Python thread (common/embedded_python) that probes with the
//                     GIL held, so it stops while the executor keeps the GIL
//   --progress=native a C++ thread (mpi_progress/progress) that never needs the GIL
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "embedded_python.hpp"
#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"
#include "progress_lifecycle.hpp"

namespace pp::gpu {

class ProgressThread {
 public:
  // Records progress_source, mpi_thread_multiple and (for a thread)
  // progress_interval_us, then starts the thread --progress names. The pump
  // needs the embedded Interpreter to be alive. Throws FatalError: kExitUsage
  // when the interval setting disables the thread, kExitInfra when MPI lacks
  // MPI_THREAD_MULTIPLE or the native thread does not start.
  void start(const PipelineOptions& options, const PipelineStage& stage);

  std::uint64_t probe_count() const;

  // Normal teardown: join whichever thread runs.
  void stop_for_shutdown();
  // Hang path: must not wait on what the hang holds. The pump's stop() needs
  // the GIL, which the executor may hold for good: it gets a bounded wait.
  void stop_for_hang();
  // True when stop_for_hang() left the pump parked behind the GIL; it must
  // then stay parked (see the teardown's release of GPU waits).
  bool pump_stuck_behind_gil() const { return pump_stuck_behind_gil_.load(); }

  // Destroys the stopped threads, before the interpreter goes.
  void release();

 private:
  std::unique_ptr<hangbench::embedded_python::PythonProgressPump> pump_;
  std::unique_ptr<hangbench::mpi_progress::ProgressLifecycle> native_;
  std::atomic<bool> pump_stuck_behind_gil_{false};
};

}  // namespace pp::gpu
