// The hang needs the schedule and sample-state messages to travel by MPI's
// rendezvous protocol: an eager send completes on its own, and then nothing
// waits for the sender to re-enter MPI. This stage checks its message size
// against the eager limits before the run, instead of a run that cannot hang.
#pragma once

#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"

namespace pp::gpu {

// Reads the eager limits through MPI_T (or takes --rendezvous-threshold),
// records message_bytes, rendezvous_threshold_bytes, eager_limits, mpi_pml and
// mpi_btl, and throws FatalError (kExitUsage) when the messages would be eager.
void require_rendezvous_messages(const PipelineOptions& options, const PipelineStage& stage);

}  // namespace pp::gpu
