#include "placement.hpp"

#include <cstdlib>

namespace hangbench::workload {

std::string to_string(Placement p) { return p == Placement::GpuPerRank ? "gpu-per-rank" : "shared-gpu"; }

std::optional<Placement> placement_from_string(const std::string& text) {
  if (text == "gpu-per-rank") return Placement::GpuPerRank;
  if (text == "shared-gpu") return Placement::SharedGpu;
  return std::nullopt;
}

DeviceChoice device_for_rank(Placement p, int local_rank, int local_size, int visible_devices) {
  if (visible_devices < 1) return {-1, "no CUDA device visible"};
  if (p == Placement::SharedGpu) return {0, ""};
  if (local_size > visible_devices) {
    return {-1, std::to_string(local_size) + " ranks on this node but " + std::to_string(visible_devices) +
                    " GPU(s): --placement=gpu-per-rank needs one GPU per rank; use --placement=shared-gpu"};
  }
  return {local_rank, ""};
}

std::string claim_nccl_host(Placement p, int world_rank) {
  const char* set = std::getenv("NCCL_HOSTID");
  if (set != nullptr && *set != '\0') return set;
  if (p != Placement::SharedGpu) return "";
  const std::string id = "hangbench-rank" + std::to_string(world_rank);
  setenv("NCCL_HOSTID", id.c_str(), 1);
  return id;
}

}  // namespace hangbench::workload
