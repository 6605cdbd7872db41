// nccl_teardown: the teardown hang's smallest real reproducer, without libtorch.
// One NCCL rank on one GPU (its init opens the TCP connection to its own proxy
// service thread), a few checked all-reduces, DataLoader-like workers forked
// after init (each holds a duplicate of that connection), then ncclCommAbort or
// ncclCommDestroy, timed. Over a release whose ncclSocketClose only close()s,
// the abort waits for the workers, which live as long as this process: a hang.
//
// Phases: start, nccl_loaded, device_ready (with device memory), init_done, work_done, workers_forked, teardown_begin,
// teardown_end. Exit codes: 0 healthy; 1 an all-reduce gave a wrong result;
// 2 usage; 3 infrastructure (no GPU, NCCL not loadable, init failed); 4 other error
// (the contract of every workload, workload_exit_codes.hpp).
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_buffer.hpp"
#include "loader_workers.hpp"
#include "log_line.hpp"
#include "nccl_loader.hpp"
#include "nccl_rank_start.hpp"
#include "options.hpp"
#include "phase.hpp"
#include "workload_exit_codes.hpp"
#include "workload_main.hpp"

namespace hangbench::nccl_teardown {
namespace {

using nccl_abi::NcclLibrary;

constexpr int kExitWrongResult = hangbench::workload_exit::kWrongResult;

// Thrown for what the machine or the library lacks (exit 3), not for our bugs.
using workload::InfraError;

std::optional<loader::WorkerPool> fork_workers(const Options& o) {
  loader::PoolOptions pool;
  pool.workers = o.workers;
  pool.method = loader::StartMethod::Fork;
  auto workers = loader::WorkerPool::start(pool);
  std::string pids;
  for (pid_t pid : workers.pids()) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
  phase::metric("worker_pids", pids);
  phase::mark("workers_forked");
  return workers;
}

// Sums a constant across the one rank and checks it: the correctness column.
bool all_reduce_checked(const NcclLibrary& nccl, nccl_abi::ncclComm_t comm, DeviceBuffer& buffer, int rounds) {
  bool correct = true;
  for (int round = 0; round < rounds; ++round) {
    const float value = 1.0f + static_cast<float>(round);
    buffer.upload(std::vector<float>(static_cast<size_t>(buffer.count()), value));
    nccl.check(nccl.api().AllReduce(buffer.data(), buffer.data(), static_cast<size_t>(buffer.count()),
                                    nccl_abi::kFloat32, nccl_abi::kSum, comm, buffer.stream()),
               "ncclAllReduce");
    for (float got : buffer.download()) {
      if (std::fabs(got - value) > 0) correct = false;
    }
  }
  return correct;
}

int run(const Options& o) {
  std::optional<NcclLibrary> nccl = workload::load_nccl_marking_phases(o.nccl_lib);
  workload::log_line("NCCL " + nccl->version() + " from " + nccl->resolved_path());

  // Read by CUDA when the context is made, which is below: NCCL has not touched CUDA yet.
  if (o.cuda_connections > 0) ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(o.cuda_connections).c_str(), 1);

  std::unique_ptr<DeviceBuffer> buffer;
  if (o.device_memory) {
    buffer = open_device_buffer(o.device, o.count, o.sync);
    phase::metric("gpu_architecture", buffer->architecture());
    phase::mark("device_ready");  // the CUDA context exists: what follows is NCCL's own init
  }

  std::optional<loader::WorkerPool> workers;
  if (o.holders == Holders::Before) workers = fork_workers(o);

  nccl_abi::ncclUniqueId id{};
  nccl_abi::ncclComm_t comm = nullptr;
  try {
    nccl->check(nccl->api().GetUniqueId(&id), "ncclGetUniqueId");
    nccl->check(nccl->api().CommInitRank(&comm, 1, id, 0), "ncclCommInitRank");
  } catch (const std::exception& e) {
    throw InfraError(std::string("did not initialise: ") + e.what());
  }
  phase::mark("init_done");

  bool correct = true;
  if (buffer) correct = all_reduce_checked(*nccl, comm, *buffer, o.allreduces);
  phase::metric("allreduce_correct", correct ? 1.0 : 0.0);
  phase::mark("work_done");

  if (o.holders == Holders::After) workers = fork_workers(o);

  phase::mark("teardown_begin");
  const auto begin = std::chrono::steady_clock::now();
  const auto rc = o.teardown == Teardown::Abort ? nccl->api().CommAbort(comm) : nccl->api().CommDestroy(comm);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  phase::metric("teardown_s", seconds);
  phase::mark("teardown_end");
  nccl->check(rc, o.teardown == Teardown::Abort ? "ncclCommAbort" : "ncclCommDestroy");
  workload::logf("%s took %g s", o.teardown == Teardown::Abort ? "abort" : "destroy", seconds);
  if (workers) workers->stop();
  return correct ? 0 : kExitWrongResult;
}

}  // namespace
}  // namespace hangbench::nccl_teardown

int main(int argc, char** argv) {
  using namespace hangbench::nccl_teardown;
  return hangbench::workload::workload_main("nccl_teardown", argc, argv, parse_options,
                                            [](const Options& o) { return run(o); });
}
