#include "pipeline_run.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "cycle_model.hpp"
#include "device_setup.hpp"
#include "hang_watcher.hpp"
#include "phase.hpp"
#include "pipeline_parts.hpp"
#include "pipeline_teardown.hpp"
#include "rendezvous_requirement.hpp"
#include "shutdown_sequence.hpp"
#include "stage_plan.hpp"
#include "workload_exit_codes.hpp"

namespace pp::gpu {
namespace {

namespace phase = hangbench::phase;

// The cell of the matrix this run is, and what src/cycle_model predicts for
// it, so that a trial's outcome can be read against the model.
void record_cell_and_prediction(const PipelineOptions& options, const PipelineStage& stage) {
  const ModuleLoading loading = module_loading_from_env(std::getenv("CUDA_MODULE_LOADING"));
  phase::metric("module_loading", to_string(loading));
  phase::metric("stages", static_cast<double>(stage.count));
  phase::metric("activation_link", to_string(options.link));
  phase::metric("cold_call", to_string(options.cold_call));
  const ModelResult predicted =
      simulate_pipeline({stage.count, options.steps}, options.progress, loading, options.cold_call);
  phase::metric("model_prediction", predicted.completed ? "completes" : "deadlocks");
  if (stage.index == 0) {
    stage.log("model predicts: " + std::string(predicted.completed ? "completes" : "deadlocks") +
              " (progress=" + to_string(options.progress) + ", loading=" + to_string(loading) +
              ", cold call=" + to_string(options.cold_call) + ")");
  }
}

// Where a stage's start-up goes (metrics setup_*_s): most of a completing trial's
// wall time is before init_done.
class SetupClock {
 public:
  void lap(const char* metric) {
    const auto now = std::chrono::steady_clock::now();
    phase::metric(metric, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

void set_up(PipelineParts& parts) {
  SetupClock clock;
  set_up_device(parts.options, parts.stage);
  clock.lap("setup_device_s");
  require_rendezvous_messages(parts.options, parts.stage);
  parts.interpreter.emplace();  // the GIL the executor will hold; handed back after start
  parts.progress.start(parts.options, parts.stage);
  parts.channel = std::make_unique<StageChannel>(parts.stage.comm, parts.options.message_bytes);
  clock.lap("setup_mpi_python_s");
  connect_stage_links(parts.links, parts.options, parts.stage);
  clock.lap("setup_links_s");
  parts.executor.emplace(parts.options, parts.stage, *parts.channel, parts.links);
  parts.executor->warm_up();
  clock.lap("setup_executor_s");
}

}  // namespace

int run_pipeline(const PipelineOptions& options, MPI_Comm comm) {
  PipelineParts parts;
  parts.options = options;
  parts.stage.comm = comm;
  MPI_Comm_rank(comm, &parts.stage.index);
  MPI_Comm_size(comm, &parts.stage.count);

  record_cell_and_prediction(parts.options, parts.stage);
  set_up(parts);

  // From here a signal or the watchdog takes the hang path: it owns MPI from
  // then on and ends the process.
  ShutdownSequence shutdown(pipeline_teardown_steps(parts));
  HangWatcher watcher(
      [&parts, &shutdown](const std::string& reason) {
        parts.hang_teardown.store(true);
        shutdown.run_hang_detected(reason);
      },
      std::chrono::duration<double>(parts.options.watchdog_s));
  MPI_Barrier(parts.stage.comm);
  phase::mark("init_done");

  for (const Action& action : plan_stage(parts.stage.index, {parts.stage.count, parts.options.steps})) {
    if (parts.hang_teardown.load()) break;
    parts.executor->execute(action);
  }
  // Once the hang path started, it owns MPI: the executor must not enter it again.
  while (parts.hang_teardown.load()) std::this_thread::sleep_for(std::chrono::seconds(1));
  phase::mark("work_done");
  record_nccl_transport(parts.links);  // the channels exist once the first activation went through
  phase::metric("probe_count", static_cast<double>(parts.progress.probe_count()));
  parts.stage.log("work done: " + std::to_string(parts.options.steps) + " step(s), " +
                  std::to_string(parts.progress.probe_count()) + " progress probes");
  MPI_Barrier(parts.stage.comm);
  if (!watcher.stop()) {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // the hang path exits
  }
  shutdown.run_normal();
  // MPI is finalized, the communicator and streams are freed and teardown_end is
  // written: the rest of an orderly exit (CPython's finalization, libtorch's and
  // CUDA's destructors) is process clean-up that says nothing about the pipeline,
  // so the rank leaves now, as the hang path does.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(hangbench::workload_exit::kHealthy);
}

}  // namespace pp::gpu
