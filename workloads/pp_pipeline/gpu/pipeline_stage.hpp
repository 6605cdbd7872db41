// Who this rank is in the pipeline. Every part of the run needs it: its stage
// index and the pipeline's length, the communicator the stages talk over, and
// log lines that name the stage (interleaved mpirun output must read well).
#pragma once

#include <mpi.h>

#include <string>

#include "stage_log.hpp"

namespace pp::gpu {

struct PipelineStage {
  MPI_Comm comm = MPI_COMM_NULL;  // main's duplicate of MPI_COMM_WORLD; freed by the normal teardown
  int index = 0;                  // this rank's stage, 0 .. count - 1
  int count = 0;                  // stages in the pipeline (>= 2)

  bool has_previous() const { return index > 0; }
  bool has_next() const { return index + 1 < count; }
  void log(const std::string& text) const { log_line(index, count, text); }
};

}  // namespace pp::gpu
