// The options every two-rank NCCL workload shares: the library, the device, and the two
// that rank 0 sets for the rank it starts. Each workload's options file declares the rest.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli.hpp"

namespace hangbench::workload {

// Options has nccl_lib, device, rank and unique_id_hex.
template <class Options>
void add_two_rank_options(CLI::App& app, Options& o) {
  app.add_option("--nccl-lib", o.nccl_lib, "libnccl.so to dlopen")->required();
  app.add_option("--device", o.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  app.add_option("--rank", o.rank, "(internal) this process's rank; rank 0 starts rank 1")->check(CLI::Range(0, 1));
  app.add_option("--unique-id", o.unique_id_hex, "(internal) rank 0's ncclUniqueId in hex");
}

// After parsing: rank 1 cannot join without rank 0's id.
template <class Options>
void check_two_rank_options(const Options& o) {
  if (o.rank > 0 && o.unique_id_hex.size() != 256) throw UsageError("--rank 1 needs --unique-id (256 hex digits)");
}

}  // namespace hangbench::workload
