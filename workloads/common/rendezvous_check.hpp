// Is a message of this size really sent with the rendezvous protocol?
// Below the eager limit MPI copies the payload out at once and the send needs
// no further progress from its sender; the hangs of mpi_progress and
// pp_pipeline need the opposite. Both read the eager limits MPI itself reports
// (mpi_eager_limits.hpp) and refuse to run (exit 2) when their messages would go
// eagerly. No MPI in here, so the decision is unit-tested anywhere.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace hangbench::rendezvous {

struct EagerLimit {
  std::string name;  // "btl_vader_eager_limit", "UCX_RNDV_THRESH", "--rendezvous-threshold"
  std::size_t bytes;
};

struct ThresholdReading {
  std::vector<EagerLimit> limits;  // every limit found
  // The largest: a message above it is rendezvous whichever transport carries it.
  std::size_t threshold_bytes() const;
  std::string describe() const;  // "btl_vader_eager_limit=4096,btl_tcp_eager_limit=65536"
};

// Names of MPI_T control variables that are eager limits of a point-to-point transport.
bool is_eager_limit_variable(const std::string& name);

// UCX_RNDV_THRESH as a byte count; nullopt for unset, "auto" or text it cannot read.
std::optional<std::size_t> parse_ucx_threshold(const char* text);

// nullopt when every message of `message_bytes` is above the threshold; else why not.
std::optional<std::string> rendezvous_problem(std::size_t message_bytes, const ThresholdReading& reading);

}  // namespace hangbench::rendezvous
