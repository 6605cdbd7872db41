// What each step of src/shutdown_sequence does for this workload, whose order
// that file fixes for both exit paths:
//   normal:        stop the progress thread, free NCCL, the release page and the
//                  streams, then MPI_Finalize
//   hang detected: record why, stop the progress thread without waiting on the
//                  GIL, end the spin kernels (unless that would free a pump into
//                  MPI during the abort), then MPI_Abort with exit code 5
#pragma once

#include "pipeline_parts.hpp"
#include "shutdown_sequence.hpp"

namespace pp::gpu {

// The steps act on `parts`, which must outlive the ShutdownSequence given them.
ShutdownSteps pipeline_teardown_steps(PipelineParts& parts);

}  // namespace pp::gpu
