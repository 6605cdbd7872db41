// Command line of nccl_first_collective: which NCCL, and what rank 0 does before it signals rank 1.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hangbench::nccl_first_collective {

// What rank 0 does between its first all-reduce and the signal rank 1 waits for.
//   post-then-signal: posts the all-reduce, then signals (asynchronous collectives make this
//                     legal; the hang from 2.22.3 on, where the post itself connects the ring);
//   warmup-first:     one all-reduce both ranks post at once before that (the links connected
//                     by then: a remedy in the program's own code).
enum class Order { PostThenSignal, WarmupFirst };

struct Options {
  std::string nccl_lib;  // dlopen'd; required
  Order order = Order::PostThenSignal;
  int count = 1 << 16;  // floats per all-reduce (past the inline sizes: the proxy carries it)
  int device = 0;
  // Set by rank 0 for the rank it starts (not for users).
  int rank = 0;
  std::string unique_id_hex;
  int signal_fd = -1;  // the read end of rank 0's pipe, inherited by rank 1
};

// Parses argv without argv[0] (workloads/common/cli.hpp): on --help prints usage and returns
// nullopt with *exit_code 0, on bad input prints the reason and returns nullopt with *exit_code 2.
std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code);

}  // namespace hangbench::nccl_first_collective
