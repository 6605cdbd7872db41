// pp_pipeline: the pipeline-parallel deadlock of TensorRT-LLM PR #20030 on
// real GPUs. One MPI rank per stage; the stage plan (src/stage_plan.hpp) is
// executed action by action. See README.md for the cycle and the axes.
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cold_kernel.cuh"
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
#include "spin_kernels.cuh"
#include "stage_channel.hpp"
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
  void warm_up();
  void execute(const Action& action);
  void cold_call(int step);
  ShutdownSteps shutdown_steps();

  PipelineOptions options_;
  PipelineStage stage_;
  ModuleLoading loading_ = ModuleLoading::Lazy;

  std::optional<py::Interpreter> interpreter_;
  ProgressThread progress_;
  std::unique_ptr<StageChannel> channel_;

  cudaStream_t link_stream_ = nullptr;  // spin kernel / NCCL send and receive
  cudaStream_t exec_stream_ = nullptr;  // stage compute and the cold call
  StageLinks links_;
  std::unique_ptr<py::GilHold> executor_gil_;  // held between TakeExecutorGil and ReleaseExecutorGil

  std::atomic<bool> hang_teardown_{false};  // set by the hang path: the executor parks
};

void PipelineRun::warm_up() {
  cuda_check(cudaStreamCreateWithFlags(&link_stream_, cudaStreamNonBlocking), "cudaStreamCreate(link)");
  cuda_check(cudaStreamCreateWithFlags(&exec_stream_, cudaStreamNonBlocking), "cudaStreamCreate(exec)");
  // Load the modules of the spin and compute kernels now (a null flag returns at
  // once), so that the only cold module at the cold call is the intended one.
  cuda_check(launch_spin_until_released(nullptr, 0, link_stream_), "warm-up spin launch");
  cuda_check(launch_stage_compute(links_.activation_out->data(), links_.activation_out->elements(), stage_.index,
                                  exec_stream_),
             "warm-up compute launch");
  cuda_check(cudaDeviceSynchronize(), "warm-up synchronize");
}

void PipelineRun::cold_call(int step) {
  // Let the in-flight operation start first, as in the runtime where the
  // executor reaches its next kernel while the activation send waits.
  if (links_.release_to_next) {
    const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (links_.release_to_next->host().spin_started() < static_cast<std::uint64_t>(step) + 1 &&
           std::chrono::steady_clock::now() < bound) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(options_.pre_cold_call_delay_s));
  // The executor holds the GIL here (TakeExecutorGil came before the sends).
  phase::mark("executor_blocked");
  stage_.log("executor holds the GIL and makes the first " + to_string(options_.cold_call) +
             " of a cold module while the activation send is in flight");
  const auto start = std::chrono::steady_clock::now();
  if (options_.cold_call == ColdCall::Launch) {
    cuda_check(launch_cold_kernel(links_.activation_out->data(), links_.activation_out->elements(), exec_stream_),
               "first launch of the cold kernel");
  } else {
    try {
      load_and_launch_jit_module(links_.activation_out->data(), links_.activation_out->elements(), exec_stream_);
    } catch (const std::runtime_error& e) {
      throw FatalError{kExitInfra, e.what()};
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  phase::mark("executor_unblocked");
  phase::metric("cold_call_seconds", seconds);
  stage_.log("cold call returned after " + std::to_string(seconds) + " s");
}

void PipelineRun::execute(const Action& a) {
  const std::size_t n = options_.activation_elements;
  switch (a.kind) {
    case ActionKind::ReceiveSchedule: {
      const ScheduleMessage schedule = channel_->receive_schedule(a.step);
      if (schedule.activation_elements != n) {
        throw FatalError{kExitUsage, "stage " + std::to_string(a.peer) + " sends " +
                                         std::to_string(schedule.activation_elements) +
                                         " activation elements, this stage expects " + std::to_string(n)};
      }
      phase::mark("schedule_received");
      break;
    }
    case ActionKind::ReceiveSampleState:
      channel_->receive_sample_state(a.step);
      break;
    case ActionKind::PostActivationReceive:
      if (links_.nccl) {
        links_.nccl->recv(links_.activation_in->data(), n, a.peer, link_stream_);
      } else {
        links_.release_from_previous->release_step(static_cast<std::uint64_t>(a.step));
      }
      phase::mark("released");
      break;
    case ActionKind::WaitActivationReceive:
      cuda_check(cudaStreamSynchronize(link_stream_), "waiting for the activation receive");
      break;
    case ActionKind::ComputeStage:
      if (links_.activation_in && links_.nccl) {
        cuda_check(cudaMemcpyAsync(links_.activation_out->data(), links_.activation_in->data(), n * sizeof(float),
                                   cudaMemcpyDeviceToDevice, exec_stream_),
                   "copying the received activation");
      }
      cuda_check(launch_stage_compute(links_.activation_out->data(), n, stage_.index, exec_stream_), "stage compute");
      cuda_check(cudaStreamSynchronize(exec_stream_), "stage compute");
      break;
    case ActionKind::SendSchedule:
      channel_->post_schedule(make_schedule(stage_.index, a.step, n));
      phase::mark("schedule_posted");
      break;
    case ActionKind::SendSampleState:
      channel_->post_sample_state(make_sample_state(stage_.index, a.step));
      break;
    case ActionKind::PostActivationSend:
      if (links_.nccl) {
        links_.nccl->send(links_.activation_out->data(), n, a.peer, link_stream_);
      } else {
        cuda_check(launch_spin_until_released(links_.release_to_next->device_words(),
                                              static_cast<std::uint64_t>(a.step), link_stream_),
                   "launching the spin kernel");
      }
      break;
    case ActionKind::TakeExecutorGil:
      // Like Python executor code: the GIL stays held from posting the
      // messages to the end of the cold call, with no chance for a pump.
      executor_gil_ = std::make_unique<py::GilHold>();
      break;
    case ActionKind::FirstColdModuleCall:
      cold_call(a.step);
      break;
    case ActionKind::ReleaseExecutorGil:
      executor_gil_.reset();
      break;
    case ActionKind::WaitMessageSends:
      channel_->wait_sends();
      break;
    case ActionKind::WaitActivationSend:
      cuda_check(cudaStreamSynchronize(link_stream_), "waiting for the activation send");
      break;
  }
}

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
    if (link_stream_) cudaStreamDestroy(link_stream_);
    if (exec_stream_) cudaStreamDestroy(exec_stream_);
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
  warm_up();

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
    execute(action);
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
