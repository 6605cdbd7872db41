#include "pipeline_teardown.hpp"

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "fatal_error.hpp"
#include "phase.hpp"

namespace pp::gpu {

namespace phase = hangbench::phase;

ShutdownSteps pipeline_teardown_steps(PipelineParts& parts) {
  ShutdownSteps s;
  s.mark_phase = [](const std::string& p) { phase::mark(p); };
  s.record_hang_reason = [&parts](const std::string& why) {
    phase::metric("hang_reason", why);
    phase::metric("probe_count", static_cast<double>(parts.progress.probe_count()));
    parts.stage.log("hang detected (" + why + "): stopping progress, then MPI_Abort");
  };
  s.stop_progress = [&parts] {
    if (parts.hang_teardown.load()) {
      parts.progress.stop_for_hang();
    } else {
      parts.progress.stop_for_shutdown();
    }
  };
  s.release_gpu_waits = [&parts] {
    // Releasing the spin would let the executor leave its call and release the
    // GIL, and a pump that could not be stopped would then enter MPI during
    // the abort: in that case the spin stays.
    if (parts.links.release_to_next && !parts.progress.pump_stuck_behind_gil()) {
      parts.links.release_to_next->host().set_abort();
    }
  };
  s.free_gpu_resources = [&parts] {
    parts.links.nccl.reset();
    parts.links.release_to_next.reset();
    if (parts.executor) parts.executor->destroy_streams();
  };
  s.finalize_mpi = [&parts] {
    parts.channel.reset();
    MPI_Comm_free(&parts.stage.comm);
    MPI_Finalize();
  };
  s.abort_mpi = [] {
    MPI_Abort(MPI_COMM_WORLD, kExitHang);
    std::_Exit(kExitHang);
  };
  return s;
}

}  // namespace pp::gpu
