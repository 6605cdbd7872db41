// This stage's GPU: which one, and its CUDA context, created before anything
// is timed (under CUDA_MODULE_LOADING=EAGER the context loads every module of
// the binary, the cold one included, which is what that axis is about).
#pragma once

#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"

namespace pp::gpu {

// gpu-per-rank: the node-local rank's GPU; shared-gpu: GPU 0 for every stage.
// Records cuda_device, activation_backend and placement. Throws FatalError:
// kExitUsage when a node has more ranks than GPUs under gpu-per-rank, kExitInfra
// when CUDA fails.
void set_up_device(const PipelineOptions& options, const PipelineStage& stage);

}  // namespace pp::gpu
