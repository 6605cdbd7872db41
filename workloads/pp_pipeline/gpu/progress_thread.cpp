#include "progress_thread.hpp"

#include <mpi.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "fatal_error.hpp"
#include "phase.hpp"

namespace pp::gpu {

namespace phase = hangbench::phase;
namespace progress = hangbench::mpi_progress;
namespace py = hangbench::embedded_python;

void ProgressThread::start(const PipelineOptions& options, const PipelineStage& stage) {
  int provided_thread_level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided_thread_level);
  phase::metric("progress_source", to_string(options.progress));
  phase::metric("mpi_thread_multiple", provided_thread_level == MPI_THREAD_MULTIPLE ? 1.0 : 0.0);
  if (options.progress == ProgressSource::None) return;
  const progress::IntervalSetting interval = progress::progress_interval_from_env();
  phase::metric("progress_interval_us", static_cast<double>(interval.interval.count()));
  if (!interval.enabled()) {
    throw FatalError{kExitUsage, "--progress=" + to_string(options.progress) +
                                     " but the progress interval disables it: " + interval.reason};
  }
  if (provided_thread_level != MPI_THREAD_MULTIPLE) {
    throw FatalError{kExitInfra,
                     "this MPI does not provide MPI_THREAD_MULTIPLE; a progress thread "
                     "would call MPI concurrently with the executor"};
  }
  if (options.progress == ProgressSource::Pump) {
    MPI_Comm comm = stage.comm;
    pump_ = std::make_unique<py::PythonProgressPump>(
        [comm] {
          int found = 0;
          MPI_Iprobe(MPI_ANY_SOURCE, progress::kReservedProbeTag, comm, &found, MPI_STATUS_IGNORE);
        },
        interval.interval);
    stage.log("progress: Python pump thread every " + std::to_string(interval.interval.count()) +
              " us (needs the GIL for each probe)");
    return;
  }
  progress::StartConditions conditions;
  conditions.pipeline_stages = stage.count;
  conditions.mpi_enabled = true;
  conditions.interval = interval;
  conditions.provided_thread_level = provided_thread_level;
  std::ostringstream why;
  native_ = std::make_unique<progress::ProgressLifecycle>(conditions, stage.comm, why);
  if (!native_->started()) {
    throw FatalError{kExitInfra, "native progress thread did not start (" + progress::to_string(native_->decision()) +
                                     "): " + why.str()};
  }
  stage.log("progress: native thread every " + std::to_string(interval.interval.count()) + " us");
}

std::uint64_t ProgressThread::probe_count() const {
  if (native_) return native_->probe_count();
  if (pump_) return pump_->probe_count();
  return 0;
}

void ProgressThread::stop_for_shutdown() {
  if (native_) native_->stop_for_shutdown();
  if (pump_) pump_->stop();
}

void ProgressThread::stop_for_hang() {
  if (native_) native_->stop_for_hang();
  if (!pump_) return;
  // Wait a bounded time on a helper thread; if the pump cannot stop, it is
  // parked behind the GIL and stays there.
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([pump = pump_.get(), done] {
    pump->stop();
    done->store(true);
  }).detach();
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!done->load() && std::chrono::steady_clock::now() < bound) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!done->load()) {
    pump_stuck_behind_gil_.store(true);
    phase::metric("pump_stop", "blocked behind the GIL");
  }
}

void ProgressThread::release() {
  pump_.reset();
  native_.reset();
}

}  // namespace pp::gpu
