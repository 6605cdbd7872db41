// pp_pipeline: the pipeline-parallel deadlock of TensorRT-LLM PR #20030 on
// real GPUs. One MPI rank per stage; the stage plan (src/stage_plan.hpp) is
// executed action by action. See README.md for the cycle and the axes.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cycle_model.hpp"
#include "device_setup.hpp"
#include "embedded_python.hpp"
#include "exit_codes.hpp"
#include "fatal_error.hpp"
#include "hang_watcher.hpp"
#include "phase.hpp"
#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"
#include "progress_thread.hpp"
#include "rendezvous_requirement.hpp"
#include "shutdown_sequence.hpp"
#include "stage_channel.hpp"
#include "stage_executor.hpp"
#include "stage_links.hpp"
#include "stage_log.hpp"
#include "stage_plan.hpp"

namespace pp::gpu {
namespace {

namespace phase = hangbench::phase;
namespace py = hangbench::embedded_python;

class PipelineRun {
 public:
  PipelineRun(const PipelineOptions& options, MPI_Comm comm) : options_(options) {
    stage_.comm = comm;
    MPI_Comm_rank(comm, &stage_.index);
    MPI_Comm_size(comm, &stage_.count);
  }

  int run();

 private:
  ShutdownSteps shutdown_steps();

  PipelineOptions options_;
  PipelineStage stage_;
  ModuleLoading loading_ = ModuleLoading::Lazy;

  std::optional<py::Interpreter> interpreter_;
  ProgressThread progress_;
  std::unique_ptr<StageChannel> channel_;

  StageLinks links_;
  std::optional<StageExecutor> executor_;

  std::atomic<bool> hang_teardown_{false};  // set by the hang path: the executor parks
};

ShutdownSteps PipelineRun::shutdown_steps() {
  ShutdownSteps s;
  s.mark_phase = [](const std::string& p) { phase::mark(p); };
  s.record_hang_reason = [this](const std::string& why) {
    phase::metric("hang_reason", why);
    phase::metric("probe_count", static_cast<double>(progress_.probe_count()));
    stage_.log("hang detected (" + why + "): stopping progress, then MPI_Abort");
  };
  s.stop_progress = [this] {
    if (hang_teardown_.load()) {
      progress_.stop_for_hang();
    } else {
      progress_.stop_for_shutdown();
    }
  };
  s.release_gpu_waits = [this] {
    // Releasing the spin would let the executor leave its call and release the
    // GIL, and a pump that could not be stopped would then enter MPI during
    // the abort: in that case the spin stays.
    if (links_.release_to_next && !progress_.pump_stuck_behind_gil()) links_.release_to_next->host().set_abort();
  };
  s.free_gpu_resources = [this] {
    links_.nccl.reset();
    links_.release_to_next.reset();
    if (executor_) executor_->destroy_streams();
  };
  s.finalize_mpi = [this] {
    channel_.reset();
    MPI_Comm_free(&stage_.comm);
    MPI_Finalize();
  };
  s.abort_mpi = [] {
    MPI_Abort(MPI_COMM_WORLD, kExitHang);
    std::_Exit(kExitHang);
  };
  return s;
}

int PipelineRun::run() {
  loading_ = module_loading_from_env(std::getenv("CUDA_MODULE_LOADING"));
  phase::metric("module_loading", to_string(loading_));
  phase::metric("stages", static_cast<double>(stage_.count));
  phase::metric("single_gpu", options_.single_gpu ? 1.0 : 0.0);
  phase::metric("cold_call", to_string(options_.cold_call));
  const ModelResult predicted =
      simulate_pipeline({stage_.count, options_.steps}, options_.progress, loading_, options_.cold_call);
  phase::metric("model_prediction", predicted.completed ? "completes" : "deadlocks");
  if (stage_.index == 0) {
    stage_.log("model predicts: " + std::string(predicted.completed ? "completes" : "deadlocks") +
               " (progress=" + to_string(options_.progress) + ", loading=" + to_string(loading_) +
               ", cold call=" + to_string(options_.cold_call) + ")");
  }

  set_up_device(options_, stage_);
  require_rendezvous_messages(options_, stage_);
  interpreter_.emplace();  // the GIL the executor will hold; handed back after start
  progress_.start(options_, stage_);
  channel_ = std::make_unique<StageChannel>(stage_.comm, options_.message_bytes);
  connect_stage_links(links_, options_, stage_);
  executor_.emplace(options_, stage_, *channel_, links_);
  executor_->warm_up();

  ShutdownSequence shutdown(shutdown_steps());
  HangWatcher watcher(
      [this, &shutdown](const std::string& reason) {
        hang_teardown_.store(true);
        shutdown.run_hang_detected(reason);
      },
      std::chrono::duration<double>(options_.watchdog_s));
  MPI_Barrier(stage_.comm);
  phase::mark("init_done");

  for (const Action& action : plan_stage(stage_.index, {stage_.count, options_.steps})) {
    if (hang_teardown_.load()) break;
    executor_->execute(action);
  }
  // Once the hang path started, it owns MPI: the executor must not enter it again.
  while (hang_teardown_.load()) std::this_thread::sleep_for(std::chrono::seconds(1));
  phase::mark("work_done");
  phase::metric("probe_count", static_cast<double>(progress_.probe_count()));
  stage_.log("work done: " + std::to_string(options_.steps) + " step(s), " +
             std::to_string(progress_.probe_count()) + " progress probes");
  MPI_Barrier(stage_.comm);
  if (!watcher.stop()) {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // the hang path exits
  }
  shutdown.run_normal();
  progress_.release();
  interpreter_.reset();
  HangWatcher::unblock_watched_signals();
  return 0;
}

}  // namespace
}  // namespace pp::gpu

int main(int argc, char** argv) {
  using namespace pp;
  using namespace pp::gpu;
  // Before any thread exists: MPI, CUDA and Python threads inherit the mask,
  // so the watched signals reach only the hang watcher.
  HangWatcher::block_watched_signals();
  auto parsed = parse_pipeline_options(std::vector<std::string>(argv + 1, argv + argc));
  if (auto* help = std::get_if<HelpRequested>(&parsed)) {
    std::cout << help->text;
    return hangbench::exit_code::kHealthy;
  }
  if (auto* error = std::get_if<UsageError>(&parsed)) {
    std::cerr << error->message << "\n";   // "pp_pipeline: reason (see --help)"
    return kExitUsage;
  }
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::cerr << "pp_pipeline: MPI_Init_thread failed\n";
    return kExitInfra;
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    log_line(rank, size, "error: a pipeline needs at least 2 ranks (mpirun -np N, N >= 2)");
    MPI_Finalize();
    return kExitUsage;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  try {
    PipelineRun run(std::get<PipelineOptions>(parsed), comm);
    return run.run();
  } catch (const FatalError& e) {
    log_line(rank, size, "error: " + e.message);
    hangbench::phase::metric("error", e.message);
    MPI_Abort(MPI_COMM_WORLD, e.exit_code);
    return e.exit_code;
  } catch (const std::exception& e) {
    log_line(rank, size, std::string("error: ") + e.what());
    hangbench::phase::metric("error", e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitInfra);
    return kExitInfra;
  }
}
