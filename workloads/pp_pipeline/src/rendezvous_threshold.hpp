// pp_pipeline's names for the rendezvous check, which lives in
// workloads/common/rendezvous_check.hpp (shared with mpi_progress).
#pragma once

#include "rendezvous_check.hpp"

namespace pp {

using hangbench::rendezvous::EagerLimit;
using hangbench::rendezvous::is_eager_limit_variable;
using hangbench::rendezvous::parse_ucx_threshold;
using hangbench::rendezvous::rendezvous_problem;
using hangbench::rendezvous::ThresholdReading;

}  // namespace pp
