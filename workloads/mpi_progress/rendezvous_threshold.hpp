// The size above which the configured MPI transport switches from eager to
// rendezvous, read from what the cell configured, so the workload can prove
// that its message takes the rendezvous path (where completing a send needs
// the sender to re-enter MPI).
//
//   OMPI_MCA_pml=ucx            -> UCX_RNDV_THRESH (must be set to a number)
//   otherwise (ob1)             -> the largest btl_<name>_eager_limit of the
//                                  BTLs in OMPI_MCA_btl (self excluded), read
//                                  through the MPI tool interface (MPI_T), which
//                                  reflects OMPI_MCA_btl_<name>_eager_limit
// MPI_T is read through workloads/common/mpi_eager_limits.hpp and the message
// size checked with rendezvous_check.hpp, as pp_pipeline does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hangbench::mpi_progress {

struct RendezvousThreshold {
  std::uint64_t bytes = 0;
  std::string source;  // "btl_tcp_eager_limit (MPI_T)", "UCX_RNDV_THRESH", ...
  std::string pml;     // as configured ("" = Open MPI's choice)
  std::string btl;
};

// Reads the threshold; call after MPI_Init. On failure returns nullopt and
// sets `error` to a sentence naming the setting to fix.
std::optional<RendezvousThreshold> read_rendezvous_threshold(std::string& error);

}  // namespace hangbench::mpi_progress
