// nccl_launch_blocking: NVIDIA/nccl issue 750 on one GPU. Rank 0 loads NCCL, makes
// the unique id and starts rank 1 (this program again, its own NCCL host through
// NCCL_HOSTID, so the two ranks talk through NET/Socket and NCCL's proxy thread);
// both set CUDA_LAUNCH_BLOCKING before CUDA starts, make a communicator and run
// checked all-reduces. NCCL 2.13-2.16 launch the kernel before posting the proxy's
// work; with launches blocking, the kernel waits for a proxy that waits for the
// host thread: the first all-reduce never returns. 2.17.1 posts the proxy work first.
//
// Phases (each rank): start, nccl_loaded, device_ready, init_done, collective_begin,
// collective_end. Exit codes: 0 healthy; 1 a wrong sum; 2 usage; 3 infrastructure
// (no GPU, NCCL not loadable, init failed, rank 1 could not start); 4 other error.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_buffer.hpp"
#include "launch_options.hpp"
#include "log_line.hpp"
#include "nccl_loader.hpp"
#include "nccl_rank_start.hpp"
#include "phase.hpp"
#include "spawned_rank.hpp"
#include "unique_id_hex.hpp"
#include "workload_exit_codes.hpp"
#include "workload_main.hpp"

namespace hangbench::nccl_launch_blocking {
namespace {

using nccl_abi::NcclLibrary;
using nccl_teardown::open_device_buffer;

using workload::InfraError;

// Rank 1 is this program again, with the id and its own NCCL host.
pid_t start_rank1(const Options& o, const nccl_abi::ncclUniqueId& id) {
  pid_t pid = 0;
  try {
    pid = workload::spawn_self({"/proc/self/exe", "--nccl-lib=" + o.nccl_lib, "--ranks=2", "--rank=1",
                                "--unique-id=" + workload::unique_id_to_hex(id),
                                "--allreduces=" + std::to_string(o.allreduces), "--count=" + std::to_string(o.count),
                                "--launch-blocking=" + std::string(o.launch_blocking ? "1" : "0"),
                                "--device=" + std::to_string(o.device)});
  } catch (const std::runtime_error&) {
    throw InfraError("could not start rank 1");
  }
  phase::metric("rank1_pid", std::to_string(pid));
  return pid;
}

int run(const Options& o) {
  // Before NCCL and CUDA read them: each rank its own NCCL host (NET/Socket between
  // ranks on one GPU), and launches that return only when the kernel has finished.
  if (!workload::become_one_gpu_rank("hangbench-lb-rank", o.rank))
    return workload_exit::kInfrastructure;  // rank 0 is gone
  if (o.launch_blocking) {
    ::setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
  } else {
    ::unsetenv("CUDA_LAUNCH_BLOCKING");
  }
  std::optional<NcclLibrary> nccl = workload::load_nccl_marking_phases(o.nccl_lib);

  // Rank 1 starts before rank 0 makes its CUDA context (ncclGetUniqueId needs none):
  // the two contexts are made at once, not one after the other (a second or more
  // each on a busy GPU).
  nccl_abi::ncclUniqueId id{};
  workload::SpawnedRank rank1;
  if (o.rank == 0) {
    nccl->check(nccl->api().GetUniqueId(&id), "ncclGetUniqueId");
    if (o.ranks == 2) rank1.pid = start_rank1(o, id);
  } else {
    id = workload::unique_id_from_hex(o.unique_id_hex);
  }

  // The CUDA context before the communicator (as nccl_teardown): NCCL's calls find it.
  const auto buffer = open_device_buffer(o.device, o.count);
  phase::metric("gpu_architecture", buffer->architecture());
  phase::mark("device_ready");

  nccl_abi::ncclComm_t comm = nullptr;
  try {
    nccl->check(nccl->api().CommInitRank(&comm, o.ranks, id, o.rank), "ncclCommInitRank");
  } catch (const std::exception& e) {
    throw InfraError(std::string("did not initialise: ") + e.what());
  }
  phase::mark("init_done");

  bool correct = true;
  phase::mark("collective_begin");
  for (int round = 0; round < o.allreduces; ++round) {
    const float value = 1.0f + static_cast<float>(round);
    buffer->upload(std::vector<float>(static_cast<size_t>(buffer->count()), value));
    nccl->check(nccl->api().AllReduce(buffer->data(), buffer->data(), static_cast<size_t>(buffer->count()),
                                      nccl_abi::kFloat32, nccl_abi::kSum, comm, buffer->stream()),
                "ncclAllReduce");
    for (float got : buffer->download())
      if (std::fabs(got - value * static_cast<float>(o.ranks)) > 0) correct = false;
  }
  phase::metric("allreduce_correct", correct ? 1.0 : 0.0);
  phase::mark("collective_end");
  nccl->check(nccl->api().CommDestroy(comm), "ncclCommDestroy");

  if (rank1.pid > 0) {
    if (const int rank1_exit = rank1.wait_for_clean_exit("rank 1"); rank1_exit != 0) return rank1_exit;
  }
  return correct ? 0 : hangbench::workload_exit::kWrongResult;
}

}  // namespace
}  // namespace hangbench::nccl_launch_blocking

int main(int argc, char** argv) {
  using namespace hangbench::nccl_launch_blocking;
  return hangbench::workload::workload_main("nccl_launch_blocking", argc, argv, parse_options,
                                            [](const Options& o) { return run(o); });
}
