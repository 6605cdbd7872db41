// Command line of nccl_bootstrap_silent: which NCCL, which intruder, and whether the
// ranks bound their init by a deadline of their own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "intruder.hpp"

namespace hangbench::nccl_bootstrap_silent {

struct Options {
  std::string nccl_lib;  // dlopen'd; required
  IntruderMode intruder = IntruderMode::Silent;
  // 0: ncclCommInitRank, which blocks for as long as the bootstrap does. Otherwise a
  // non-blocking init (ncclCommInitRankConfig, blocking = 0) polled until this many
  // seconds have passed, then ncclCommAbort: the program's own remedy.
  double init_deadline = 0;
  int count = 1 << 10;  // floats in the one all-reduce after init
  int device = 0;
  // Set by rank 0 for the rank it starts (not for users).
  int rank = 0;
  std::string unique_id_hex;
};

const char* intruder_word(IntruderMode mode);

// Parses argv without argv[0] (workloads/common/cli.hpp): on --help prints usage and returns
// nullopt with *exit_code 0, on bad input prints the reason and returns nullopt with *exit_code 2.
std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code);

}  // namespace hangbench::nccl_bootstrap_silent
