// Command line of the mpi_progress workload.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hangbench::mpi_progress {

enum class ProgressMode { None, Pump, Native };
std::string to_string(ProgressMode m);

struct WorkloadOptions {
  ProgressMode progress = ProgressMode::None;
  std::uint64_t message_bytes = 4u << 20;  // well above any eager limit
  // Empty: from HANGBENCH_MPI_PROGRESS_INTERVAL_US (or its alias), default 5000.
  std::optional<long long> interval_us;
  // > 0: the hang-detected path. If the executor is still blocked after this
  // many seconds, rank 0 stops its progress source and aborts MPI (exit 5).
  double watchdog_s = 0;
};

// Parses argv; on bad input prints the reason and usage to stderr and returns
// nullopt (the caller exits 2). --help prints usage and exits 0.
std::optional<WorkloadOptions> parse_workload_options(int argc, char** argv);

}  // namespace hangbench::mpi_progress
