// Command line of nccl_launch_blocking: which NCCL, how many ranks, whether launches block.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hangbench::nccl_launch_blocking {

struct Options {
  std::string nccl_lib;         // dlopen'd; required
  int ranks = 2;                // 1 (no peer: the proxy is idle, a control) or 2 (NET/Socket via the proxy)
  int allreduces = 3;           // each checked
  int count = 1 << 16;          // floats per all-reduce (past the inline sizes: the proxy carries it)
  bool launch_blocking = true;  // CUDA_LAUNCH_BLOCKING=1 in every rank, before CUDA starts
  int device = 0;
  // Set by rank 0 for the rank it starts (not for users).
  int rank = 0;
  std::string unique_id_hex;
};

// Parses argv without argv[0] (workloads/common/cli.hpp): on --help prints usage and returns
// nullopt with *exit_code 0, on bad input prints the reason and returns nullopt with *exit_code 2.
std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code);

}  // namespace hangbench::nccl_launch_blocking
