#include "progress_source.hpp"

#include <ostream>

#include "embedded_python.hpp"
#include "progress_lifecycle.hpp"

namespace hangbench::mpi_progress {

namespace {

IntervalSetting interval_for(const WorkloadOptions& options) {
  if (!options.interval_us) return progress_interval_from_env();
  return parse_progress_interval(std::to_string(*options.interval_us).c_str(), "--interval-us");
}

class NoProgress final : public ProgressSource {
 public:
  void stop_for_shutdown() override {}
  void stop_for_hang() override {}
  std::uint64_t probe_count() const override { return 0; }
  bool running() const override { return false; }
};

// TensorRT-LLM's relay pump, reduced: a Python thread that probes between
// timed waits. Each probe needs the GIL.
class PythonPump final : public ProgressSource {
 public:
  PythonPump(MPI_Comm comm, std::chrono::microseconds interval)
      : pump_(
            [comm] {
              int flag = 0;
              MPI_Iprobe(MPI_ANY_SOURCE, kReservedProbeTag, comm, &flag, MPI_STATUS_IGNORE);
            },
            interval) {}
  void stop_for_shutdown() override { pump_.stop(); }
  // Joining a Python thread needs the GIL, which the hung executor holds:
  // leave the daemon thread to die with the process.
  void stop_for_hang() override {}
  std::uint64_t probe_count() const override { return pump_.probe_count(); }
  bool running() const override { return pump_.is_running(); }

 private:
  embedded_python::PythonProgressPump pump_;
};

class NativeProgress final : public ProgressSource {
 public:
  NativeProgress(const StartConditions& conditions, MPI_Comm comm, std::ostream& log)
      : lifecycle_(conditions, comm, log) {}
  void stop_for_shutdown() override { lifecycle_.stop_for_shutdown(); }
  void stop_for_hang() override { lifecycle_.stop_for_hang(); }
  std::uint64_t probe_count() const override { return lifecycle_.probe_count(); }
  bool running() const override { return lifecycle_.is_running(); }

 private:
  ProgressLifecycle lifecycle_;
};

}  // namespace

std::unique_ptr<ProgressSource> make_progress_source(const WorkloadOptions& options, MPI_Comm comm, int world_size,
                                                     std::ostream& log) {
  const IntervalSetting interval = interval_for(options);
  switch (options.progress) {
    case ProgressMode::None:
      log << "info: no progress source\n";
      return std::make_unique<NoProgress>();
    case ProgressMode::Pump:
      if (!interval.enabled()) {
        log << "info: Python pump disabled: " << interval.reason << "\n";
        return std::make_unique<NoProgress>();
      }
      log << "info: Python pump, " << interval.reason << "\n";
      return std::make_unique<PythonPump>(comm, interval.interval);
    case ProgressMode::Native: {
      StartConditions conditions;
      conditions.pipeline_stages = world_size;
      conditions.mpi_enabled = true;
      conditions.interval = interval;
      MPI_Query_thread(&conditions.provided_thread_level);
      log << "info: native progress, " << interval.reason << "\n";
      return std::make_unique<NativeProgress>(conditions, comm, log);
    }
  }
  return std::make_unique<NoProgress>();
}

}  // namespace hangbench::mpi_progress
