#include "stage_executor.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "cold_kernel.cuh"
#include "fatal_error.hpp"
#include "phase.hpp"
#include "spin_kernels.cuh"
#include "stage_messages.hpp"

namespace pp::gpu {

namespace phase = hangbench::phase;

void StageExecutor::warm_up() {
  cuda_check(cudaStreamCreateWithFlags(&link_stream_, cudaStreamNonBlocking), "cudaStreamCreate(link)");
  cuda_check(cudaStreamCreateWithFlags(&exec_stream_, cudaStreamNonBlocking), "cudaStreamCreate(exec)");
  // Load the modules of the spin and compute kernels now (a null flag returns at
  // once), so that the only cold module at the cold call is the intended one.
  cuda_check(launch_spin_until_released(nullptr, 0, link_stream_), "warm-up spin launch");
  Activation& out = *links_.activation_out;
  cuda_check(launch_stage_compute(out.data(), out.elements(), stage_.index, exec_stream_), "warm-up compute launch");
  cuda_check(cudaDeviceSynchronize(), "warm-up synchronize");
}

void StageExecutor::cold_call(int step) {
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
  Activation& out = *links_.activation_out;
  const auto start = std::chrono::steady_clock::now();
  if (options_.cold_call == ColdCall::Launch) {
    cuda_check(launch_cold_kernel(out.data(), out.elements(), exec_stream_), "first launch of the cold kernel");
  } else {
    try {
      load_and_launch_jit_module(out.data(), out.elements(), exec_stream_);
    } catch (const std::runtime_error& e) {
      throw FatalError{kExitInfra, e.what()};
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  phase::mark("executor_unblocked");
  phase::metric("cold_call_seconds", seconds);
  stage_.log("cold call returned after " + std::to_string(seconds) + " s");
}

void StageExecutor::execute(const Action& a) {
  const std::size_t n = options_.activation_elements;
  switch (a.kind) {
    case ActionKind::ReceiveSchedule: {
      const ScheduleMessage schedule = channel_.receive_schedule(a.step);
      if (schedule.activation_elements != n) {
        throw FatalError{kExitUsage, "stage " + std::to_string(a.peer) + " sends " +
                                         std::to_string(schedule.activation_elements) +
                                         " activation elements, this stage expects " + std::to_string(n)};
      }
      phase::mark("schedule_received");
      break;
    }
    case ActionKind::ReceiveSampleState:
      channel_.receive_sample_state(a.step);
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
      channel_.post_schedule(make_schedule(stage_.index, a.step, n));
      phase::mark("schedule_posted");
      break;
    case ActionKind::SendSampleState:
      channel_.post_sample_state(make_sample_state(stage_.index, a.step));
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
      executor_gil_ = std::make_unique<hangbench::embedded_python::GilHold>();
      break;
    case ActionKind::FirstColdModuleCall:
      cold_call(a.step);
      break;
    case ActionKind::ReleaseExecutorGil:
      executor_gil_.reset();
      break;
    case ActionKind::WaitMessageSends:
      channel_.wait_sends();
      break;
    case ActionKind::WaitActivationSend:
      cuda_check(cudaStreamSynchronize(link_stream_), "waiting for the activation send");
      break;
  }
}

void StageExecutor::destroy_streams() {
  if (link_stream_) cudaStreamDestroy(link_stream_);
  if (exec_stream_) cudaStreamDestroy(exec_stream_);
}

}  // namespace pp::gpu
