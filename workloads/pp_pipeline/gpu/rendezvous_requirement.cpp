#include "rendezvous_requirement.hpp"

#include <string>

#include "env_or.hpp"
#include "fatal_error.hpp"
#include "phase.hpp"
#include "stage_channel.hpp"  // pp:: names for read_mpi_eager_limits and the threshold check

namespace pp::gpu {

void require_rendezvous_messages(const PipelineOptions& options, const PipelineStage& stage) {
  namespace phase = hangbench::phase;
  ThresholdReading reading;
  if (options.rendezvous_threshold) {
    reading.limits.push_back({"--rendezvous-threshold", *options.rendezvous_threshold});
  } else {
    reading = read_mpi_eager_limits();
  }
  phase::metric("message_bytes", static_cast<double>(options.message_bytes));
  phase::metric("rendezvous_threshold_bytes", static_cast<double>(reading.threshold_bytes()));
  phase::metric("eager_limits", reading.describe());
  phase::metric("mpi_pml", env_or("OMPI_MCA_pml", "<default>"));
  phase::metric("mpi_btl", env_or("OMPI_MCA_btl", "<default>"));
  if (auto problem = rendezvous_problem(options.message_bytes, reading)) {
    throw FatalError{kExitUsage, *problem};
  }
  stage.log("messages of " + std::to_string(options.message_bytes) + " B > eager limit " +
            std::to_string(reading.threshold_bytes()) + " B (" + reading.describe() + "): rendezvous");
}

}  // namespace pp::gpu
