// Reading MPI's eager limits through the MPI tool interface (MPI_T), for the
// rendezvous check (rendezvous_check.hpp) of mpi_progress and pp_pipeline.
// Call after MPI_Init.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rendezvous_check.hpp"

namespace hangbench::rendezvous {

// MPI_T initialised for the life of the object. It asks for the thread level
// MPI already provides: Open MPI 4.1's MPI_T_init_thread overwrites the
// process's provided level with the one requested, and a lower one silently
// switched the native progress thread off.
class MpiToolSession {
 public:
  MpiToolSession();
  ~MpiToolSession();
  MpiToolSession(const MpiToolSession&) = delete;
  MpiToolSession& operator=(const MpiToolSession&) = delete;

  bool ok() const { return ok_; }
  // One integer control variable by name; nullopt if absent or not an integer.
  std::optional<std::uint64_t> read(const std::string& name) const;
  // Every control variable that is_eager_limit_variable() names.
  ThresholdReading read_every_eager_limit() const;

 private:
  bool ok_ = false;
};

// Every eager limit MPI reports, plus UCX_RNDV_THRESH from the environment.
ThresholdReading read_mpi_eager_limits();

}  // namespace hangbench::rendezvous
