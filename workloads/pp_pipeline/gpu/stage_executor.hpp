// Runs this stage's plan (src/stage_plan.hpp) on the GPU, action by action, as
// a PP runtime's executor would. Two things make the hang possible here: the
// executor takes the embedded CPython GIL before it posts its messages, and on
// the first step it makes a call into a cold CUDA module while its activation
// send is still in flight, with the GIL still held.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "embedded_python.hpp"
#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"
#include "stage_channel.hpp"
#include "stage_links.hpp"
#include "stage_plan.hpp"

namespace pp::gpu {

class StageExecutor {
 public:
  // `channel` and `links` must be set up and outlive the executor.
  StageExecutor(const PipelineOptions& options, const PipelineStage& stage, StageChannel& channel, StageLinks& links)
      : options_(options), stage_(stage), channel_(channel), links_(links) {}

  // Creates the streams and loads the module of every kernel but the cold one,
  // so that the cold call meets exactly one unloaded module.
  void warm_up();
  // One action of the plan. Throws FatalError, or std::runtime_error from the channel or NCCL.
  void execute(const Action& action);
  // Normal teardown, before MPI_Finalize. The hang path leaves them to the abort.
  void destroy_streams();

 private:
  void cold_call(int step);

  const PipelineOptions& options_;
  const PipelineStage& stage_;
  StageChannel& channel_;
  StageLinks& links_;
  cudaStream_t link_stream_ = nullptr;  // spin kernel / NCCL send and receive
  cudaStream_t exec_stream_ = nullptr;  // stage compute and the cold call
  // Held from TakeExecutorGil to ReleaseExecutorGil.
  std::unique_ptr<hangbench::embedded_python::GilHold> executor_gil_;
};

}  // namespace pp::gpu
