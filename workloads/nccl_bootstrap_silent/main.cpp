// nccl_bootstrap_silent: a connection to NCCL's bootstrap root from a process that is not
// a rank. ncclGetUniqueId starts the root: a thread of rank 0 that accepts one connection
// at a time and waits for its 8-byte magic before it accepts the next. A connection that
// says nothing (a port scanner, a health check, a stale peer) is waited on with no timeout,
// and every rank's own connection waits behind it in the listen queue: ncclCommInitRank
// never returns on any rank. Read in the tagged sources v2.16.2-1 to v2.30.7-1
// (bootstrapRoot, socketFinalizeAccept); the closed and wrong-magic intruders, which NCCL
// survives from 2.27.3 and everywhere respectively (NVIDIA/nccl issues 1612, 1871), are the controls.
//
// Rank 0 (run again with RANK=0 WORLD_SIZE=2 when started without them) loads NCCL, makes
// the unique id, starts the intruder (a forked child holding none of the job's descriptors)
// and waits until it has connected, then starts rank 1 (this program again, its own NCCL
// host through NCCL_HOSTID). Both initialise, run one all-reduce and destroy. With
// --init-deadline=S each rank initialises without blocking and aborts at S seconds: the
// program's own remedy, an error instead of a hang.
//
// Phases: start, nccl_loaded, [intruder_connected (rank 0)], device_ready, init_begin,
// init_done | init_deadline_passed, collective_end. Exit codes: 0 healthy; 1 a wrong sum;
// 2 usage; 3 infrastructure (no GPU, NCCL not loadable, no root address in the id, the
// intruder could not connect, rank 1 could not start); 4 other error (an init error, or
// the deadline passed).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_silent_options.hpp"
#include "device_buffer.hpp"
#include "intruder.hpp"
#include "log_line.hpp"
#include "nccl_loader.hpp"
#include "nccl_rank_start.hpp"
#include "phase.hpp"
#include "root_address.hpp"
#include "spawned_rank.hpp"
#include "unique_id_hex.hpp"
#include "workload_exit_codes.hpp"
#include "workload_main.hpp"

namespace hangbench::nccl_bootstrap_silent {
namespace {

using nccl_abi::NcclLibrary;
using nccl_teardown::open_device_buffer;
using workload::InfraError;

pid_t start_rank1(const Options& o, const nccl_abi::ncclUniqueId& id) {
  pid_t pid = 0;
  try {
    pid = workload::spawn_self(
        {"/proc/self/exe", "--nccl-lib=" + o.nccl_lib, "--rank=1", "--unique-id=" + workload::unique_id_to_hex(id),
         "--init-deadline=" + std::to_string(o.init_deadline), "--count=" + std::to_string(o.count),
         "--device=" + std::to_string(o.device)},
        workload::environment_for_rank(1, 2));
  } catch (const std::runtime_error&) {
    throw InfraError("could not start rank 1");
  }
  phase::metric("rank1_pid", std::to_string(pid));
  return pid;
}

// The first fields of ncclConfig_t, as NCCL_CONFIG_INITIALIZER of 2.14 sets them: a library
// of any later release copies `size` bytes and takes the rest from its own defaults.
struct ConfigOf2_14 {
  size_t size = sizeof(ConfigOf2_14);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 21400;  // NCCL_VERSION(2, 14, 0)
  int blocking = 0;
};

// A non-blocking init polled until it is done or `seconds` have passed; then aborted.
nccl_abi::ncclComm_t init_with_deadline(const NcclLibrary& nccl, const nccl_abi::ncclUniqueId& id, int rank,
                                        double seconds) {
  if (nccl.api().CommInitRankConfig == nullptr)
    throw InfraError("this NCCL has no ncclCommInitRankConfig (2.14 or later): --init-deadline needs it");
  ConfigOf2_14 config;
  nccl_abi::ncclComm_t comm = nullptr;
  const nccl_abi::ncclResult_t started = nccl.api().CommInitRankConfig(&comm, 2, id, rank, &config);
  if (started != nccl_abi::kSuccess && started != nccl_abi::kInProgress) nccl.check(started, "ncclCommInitRankConfig");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    nccl_abi::ncclResult_t state = nccl_abi::kInProgress;
    nccl.check(nccl.api().CommGetAsyncError(comm, &state), "ncclCommGetAsyncError");
    if (state == nccl_abi::kSuccess) return comm;
    if (state != nccl_abi::kInProgress) nccl.check(state, "ncclCommInitRankConfig (asynchronous)");
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  phase::mark("init_deadline_passed");
  nccl.check(nccl.api().CommAbort(comm), "ncclCommAbort");
  phase::mark("init_aborted");
  throw std::runtime_error("ncclCommInitRank did not finish within " + std::to_string(seconds) +
                           " s; the communicator was aborted");
}

int run(const Options& o) {
  // Before NCCL and CUDA read it: each rank its own NCCL host (NET/Socket on one GPU).
  if (!workload::become_one_gpu_rank("hangbench-bs-rank", o.rank))
    return workload_exit::kInfrastructure;  // rank 0 is gone
  std::optional<NcclLibrary> nccl = workload::load_nccl_marking_phases(o.nccl_lib);

  nccl_abi::ncclUniqueId id{};
  workload::SpawnedRank rank1;
  if (o.rank == 0) {
    nccl->check(nccl->api().GetUniqueId(&id), "ncclGetUniqueId");
    if (o.intruder != IntruderMode::None) {
      const std::optional<RootAddress> root = root_address_of(id);
      if (!root) throw InfraError("the unique id holds no IPv4 or IPv6 address of a bootstrap root");
      phase::metric("root_address", root->text);
      try {
        phase::metric("intruder_pid", std::to_string(start_intruder(*root, o.intruder)));
      } catch (const std::runtime_error& e) {
        throw InfraError(e.what());
      }
      phase::metric("intruder", intruder_word(o.intruder));
      phase::mark("intruder_connected");
    }
    rank1.pid = start_rank1(o, id);
  } else {
    id = workload::unique_id_from_hex(o.unique_id_hex);
  }

  const auto buffer = open_device_buffer(o.device, o.count);
  phase::metric("gpu_architecture", buffer->architecture());
  phase::mark("device_ready");

  phase::mark("init_begin");
  nccl_abi::ncclComm_t comm = nullptr;
  if (o.init_deadline > 0) {
    comm = init_with_deadline(*nccl, id, o.rank, o.init_deadline);
  } else {
    nccl->check(nccl->api().CommInitRank(&comm, 2, id, o.rank), "ncclCommInitRank");
  }
  phase::mark("init_done");

  buffer->upload(std::vector<float>(static_cast<size_t>(buffer->count()), 1.0f));
  nccl->check(nccl->api().AllReduce(buffer->data(), buffer->data(), static_cast<size_t>(buffer->count()),
                                    nccl_abi::kFloat32, nccl_abi::kSum, comm, buffer->stream()),
              "ncclAllReduce");
  bool correct = true;
  for (float got : buffer->download())
    if (std::fabs(got - 2.0f) > 0) correct = false;
  phase::metric("allreduce_correct", correct ? 1.0 : 0.0);
  phase::mark("collective_end");
  nccl->check(nccl->api().CommDestroy(comm), "ncclCommDestroy");

  if (rank1.pid > 0) {
    if (const int rank1_exit = rank1.wait_for_clean_exit("rank 1"); rank1_exit != 0) return rank1_exit;
  }
  return correct ? workload_exit::kHealthy : workload_exit::kWrongResult;
}

}  // namespace
}  // namespace hangbench::nccl_bootstrap_silent

int main(int argc, char** argv) {
  using namespace hangbench::nccl_bootstrap_silent;
  return hangbench::workload::workload_main(
      "nccl_bootstrap_silent", argc, argv, parse_options, [](const Options& o) { return run(o); },
      [argv](const Options& o) {
        if (o.rank == 0) hangbench::workload::run_as_rank0_of(2, argv);
      });
}
