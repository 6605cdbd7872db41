// Command line of nccl_peer_death: which NCCL, when the peer dies, what rank 0 does after.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hangbench::nccl_peer_death {

enum class AfterError { Abort, Exit };
// How rank 0 aborts two communicators: one after the other, or in one group (NCCL 2.22.3's
// grouped abort; NVIDIA/nccl issue 1013, PyTorch issue 119797).
enum class AbortOrder { Each, Grouped };
// How rank 1 dies: by its own hand right after the warm-up, or killed by rank 0 once rank 0's
// last all-reduces are posted (alive but idle until then, so every posted kernel waits on it),
// or not at all: alive and idle, never posting, while rank 0 gives up and aborts (NVIDIA/nccl
// issue 829: a watchdog's abort of a collective one rank never joined).
enum class PeerDeath { Self, KilledAfterPost, Idle };
// Which thread of rank 0 waits for the error and aborts: the main thread, or a second one
// while the main thread stays in CUDA calls (waits for the pending kernels, then copies),
// as a watchdog thread does (NVIDIA/nccl issue 992, reported on 2.18.1).
enum class AbortFrom { Main, Thread };

struct Options {
  std::string nccl_lib;                        // dlopen'd; required
  int warmups = 2;                             // checked all-reduces both ranks finish before rank 1 dies
  int count = 1 << 20;                         // floats per all-reduce (4 MiB: the proxy carries it over NET/Socket)
  double error_wait_s = 0;                     // how long rank 0 waits for NCCL to report the death; 0 = for ever
  AfterError after_error = AfterError::Abort;  // abort the communicator, or leave the process
  int comms = 1;                               // communicators between the two ranks, each with a collective pending
  AbortOrder abort_order = AbortOrder::Each;
  PeerDeath peer_death = PeerDeath::Self;
  AbortFrom abort_from = AbortFrom::Main;
  int device = 0;
  // Set by rank 0 for the rank it starts (not for users).
  int rank = 0;
  std::string unique_id_hex;
  std::string second_unique_id_hex;  // with --comms=2
};

// Parses argv without argv[0] (workloads/common/cli.hpp): on --help prints usage and returns
// nullopt with *exit_code 0, on bad input prints the reason and returns nullopt with *exit_code 2.
std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code);

}  // namespace hangbench::nccl_peer_death
