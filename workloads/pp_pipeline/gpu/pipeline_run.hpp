// One stage's whole run, in order: record the cell and what the cycle model
// predicts for it, set up (device, rendezvous check, interpreter, progress
// thread, message channel, links, warm-up), arm the hang path, execute the
// stage plan, and tear down.
#pragma once

#include <mpi.h>

#include "pipeline_options.hpp"

namespace pp::gpu {

// `comm` is this run's duplicate of MPI_COMM_WORLD; the normal teardown frees
// it and finalises MPI. Returns 0 when the plan completed; the hang path ends
// the process through MPI_Abort (exit code 5) and never returns. Throws
// FatalError or std::exception on errors, after the parts are taken down.
int run_pipeline(const PipelineOptions& options, MPI_Comm comm);

}  // namespace pp::gpu
