#include "shutdown_sequence.hpp"

namespace pp {

bool ShutdownSequence::run_normal() {
  if (!claim()) return false;
  mark("teardown_begin");
  call(steps_.stop_progress);
  call(steps_.free_gpu_resources);
  call(steps_.finalize_mpi);
  mark("teardown_end");
  return true;
}

bool ShutdownSequence::run_hang_detected(const std::string& reason) {
  if (!claim()) return false;
  mark("hang_detected");
  if (steps_.record_hang_reason) steps_.record_hang_reason(reason);
  call(steps_.stop_progress);
  call(steps_.release_gpu_waits);
  mark("teardown_begin");
  // MPI_Abort does not return, so the end of teardown is marked before it.
  mark("teardown_end");
  call(steps_.abort_mpi);
  return true;
}

}  // namespace pp
