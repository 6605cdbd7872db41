// The axis of the workload: what, if anything, drives MPI progress while the
// executor is blocked. One interface, three implementations.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "workload_options.hpp"

namespace hangbench::mpi_progress {

class ProgressSource {
 public:
  virtual ~ProgressSource() = default;
  virtual void stop_for_shutdown() = 0;
  // The hang-detected path: must not wait for anything the hang holds.
  virtual void stop_for_hang() = 0;
  virtual std::uint64_t probe_count() const = 0;
  virtual bool running() const = 0;
};

// none -> a source that does nothing; pump -> a Python thread (needs the
// embedded interpreter to be alive); native -> ProgressLifecycle.
// Writes one line about what it started to `log`.
std::unique_ptr<ProgressSource> make_progress_source(const WorkloadOptions& options, MPI_Comm comm, int world_size,
                                                     std::ostream& log);

}  // namespace hangbench::mpi_progress
