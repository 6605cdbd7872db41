// Command line of nccl_teardown: which NCCL, how to tear down, who holds the sockets.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hangbench::nccl_teardown {

enum class Teardown { Abort, Destroy };
// When the DataLoader-like workers are forked: after ncclCommInitRank (they then
// hold duplicates of the proxy connection), before it, or not at all.
enum class Holders { After, Before, None };
// How CUDA waits for the GPU in this process (cudaSetDeviceFlags): many trials
// sharing one GPU and fewer cores than trials make spinning waits costly.
enum class SyncMode { Auto, Spin, Yield, Blocking };

struct Options {
  std::string nccl_lib;  // dlopen'd; required
  Teardown teardown = Teardown::Abort;
  Holders holders = Holders::After;
  int workers = 2;  // forked holders, as DataLoader's num_workers
  int device = 0;
  int allreduces = 10;  // before the teardown; each checked
  int count = 1024;     // floats per all-reduce
  SyncMode sync = SyncMode::Auto;
  int cuda_connections = 0;   // CUDA_DEVICE_MAX_CONNECTIONS for this process; 0 = CUDA's default (8)
  bool device_memory = true;  // false: no CUDA calls, no all-reduce (CPU tests with a fake NCCL)
};

// Parses argv without argv[0] (workloads/common/cli.hpp): on --help prints usage and
// returns nullopt with *exit_code 0, on bad input prints the reason and returns
// nullopt with *exit_code 2.
std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code);

}  // namespace hangbench::nccl_teardown
