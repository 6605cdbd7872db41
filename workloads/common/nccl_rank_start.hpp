// The first steps of a rank of the NCCL workloads that put every rank on one GPU: its own
// NCCL host, death with rank 0, and the library loaded with its phases and version.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "nccl_loader.hpp"
#include "phase.hpp"
#include "workload_main.hpp"

namespace hangbench::workload {

// Before NCCL and CUDA read it: rank `rank` its own NCCL host (NCCL_HOSTID, so ranks on one
// GPU talk through NET/Socket and NCCL's proxy, as ranks on separate hosts would). A rank
// other than 0 dies with rank 0, so a killed or timed-out trial leaves no rank behind.
// False when rank 0 is already gone.
inline bool become_one_gpu_rank(const std::string& host_prefix, int rank) {
  ::setenv("NCCL_HOSTID", (host_prefix + std::to_string(rank)).c_str(), 1);
  if (rank == 0) return true;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  return ::getppid() != 1;
}

// Phase start, the library (InfraError when it cannot be loaded), the metric nccl_version,
// phase nccl_loaded.
inline std::optional<nccl_abi::NcclLibrary> load_nccl_marking_phases(const std::string& path) {
  phase::mark("start");
  std::optional<nccl_abi::NcclLibrary> nccl;
  try {
    nccl.emplace(nccl_abi::NcclLibrary::open(path));
  } catch (const std::exception& e) {
    throw InfraError(e.what());
  }
  phase::metric("nccl_version", nccl->version());
  phase::mark("nccl_loaded");
  return nccl;
}

}  // namespace hangbench::workload
