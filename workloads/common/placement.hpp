// Where the ranks of a multi-rank workload run: one GPU each, or all on one GPU.
// Several NCCL ranks share one GPU only when each claims its own host
// (NCCL_HOSTID): NCCL then joins them through its network transport, as ranks on
// different nodes (facts: four ranks on one H200 over NET/Socket).
#pragma once

#include <optional>
#include <string>

namespace hangbench::workload {

enum class Placement {
  GpuPerRank,  // rank r on GPU local_rank: the layout of a real node
  SharedGpu,   // every rank on GPU 0, each its own NCCL "host"
};

std::string to_string(Placement p);
std::optional<Placement> placement_from_string(const std::string& text);  // "gpu-per-rank" | "shared-gpu"

// The CUDA device of a rank, or an error sentence when the placement cannot be met
// (more local ranks than GPUs with gpu-per-rank).
struct DeviceChoice {
  int device = -1;
  std::string error;  // empty when `device` is usable
};
DeviceChoice device_for_rank(Placement p, int local_rank, int local_size, int visible_devices);

// The NCCL host id a rank claims under SharedGpu: the environment's NCCL_HOSTID
// when set (the user's choice wins), else "hangbench-rank<rank>", which is set in
// this process's environment before NCCL reads it. Returns the id in effect ("" when
// the placement needs none and none is set).
std::string claim_nccl_host(Placement p, int world_rank);

}  // namespace hangbench::workload
