// nccl_peer_death: a rank dies in the middle of a job, and the survivor must hear of
// it. Rank 0 loads NCCL, makes the unique id and starts rank 1 (this program again,
// its own NCCL host through NCCL_HOSTID, so the ranks talk through NET/Socket and
// NCCL's proxy progress thread). Both run checked all-reduces; then rank 1 kills
// itself, rank 0 posts one more all-reduce, reaps rank 1 and polls
// ncclCommGetAsyncError until NCCL reports the death, then aborts its communicator.
//   2.26.2-2.28.2: progressOps drops the failed network operation and returns
//     success, so no error ever comes (catalog/nccl-net-error-swallowed.toml).
//   2.23.4-2.25.1: the error comes, but the progress thread's loop no longer checks
//     the abort flag and the failed operation stays active: ncclCommAbort joins a
//     thread that spins for ever (catalog/nccl-progress-abort-spin.toml).
// With --comms=2 each rank holds two communicators and rank 0 has an all-reduce
// pending on both when its peer dies: ncclCommAbort of the first frees device
// memory, which waits for the second one's kernel, still spinning on the dead peer
// (NVIDIA/nccl issue 1013). A grouped abort (2.22.3 on) aborts both at once.
// With --peer-death=idle rank 1 stays alive and never posts its last all-reduce: rank 0
// gives up after --error-wait and aborts a communicator whose kernel waits for a live
// peer (NVIDIA/nccl issue 829); phase peer_idle replaces peer_dead.
// With --abort-from=thread a second thread of rank 0 waits for the error and aborts while
// the main thread stays in CUDA calls: it waits for the pending kernels (phase
// main_sync_returned once the abort stopped them), then copies to and from the GPU until
// the abort ends (NVIDIA/nccl issue 992, reported on 2.18.1, "fixed in 2.19.1").
//
// Phases (rank 0): start, nccl_loaded, device_ready, init_done, warmup_done,
// collective_posted, peer_dead, error_reported | error_wait_expired, abort_begin,
// abort_end (with --comms=2 and --abort-order=each, comm0_aborted between them).
// Rank 1 stops at warmup_done. Exit codes: 0 the job ended (with or
// without the error: metric error_reported); 1 a wrong warm-up sum; 2 usage;
// 3 infrastructure (no GPU, NCCL not loadable, init failed, rank 1 could not start
// or did not die); 4 other error.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "device_buffer.hpp"
#include "log_line.hpp"
#include "nccl_loader.hpp"
#include "nccl_rank_start.hpp"
#include "peer_death_options.hpp"
#include "phase.hpp"
#include "spawned_rank.hpp"
#include "unique_id_hex.hpp"
#include "workload_exit_codes.hpp"
#include "workload_main.hpp"

namespace hangbench::nccl_peer_death {
namespace {

using nccl_abi::NcclLibrary;
using nccl_teardown::DeviceBuffer;
using nccl_teardown::open_device_buffer;

using workload::InfraError;

double monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

const char* peer_death_word(PeerDeath d) {
  switch (d) {
    case PeerDeath::Self:
      return "self";
    case PeerDeath::KilledAfterPost:
      return "killed-after-post";
    case PeerDeath::Idle:
      return "idle";
  }
  return "self";
}

pid_t start_rank1(const Options& o, const std::vector<nccl_abi::ncclUniqueId>& ids) {
  std::vector<std::string> args = {"/proc/self/exe",
                                   "--nccl-lib=" + o.nccl_lib,
                                   "--rank=1",
                                   "--unique-id=" + workload::unique_id_to_hex(ids[0]),
                                   "--warmups=" + std::to_string(o.warmups),
                                   "--count=" + std::to_string(o.count),
                                   "--device=" + std::to_string(o.device),
                                   "--comms=" + std::to_string(o.comms),
                                   std::string("--peer-death=") + peer_death_word(o.peer_death)};
  if (ids.size() > 1) args.push_back("--second-unique-id=" + workload::unique_id_to_hex(ids[1]));
  pid_t pid = 0;
  try {
    pid = workload::spawn_self(args, workload::environment_for_rank(1, 2));
  } catch (const std::runtime_error&) {
    throw InfraError("could not start rank 1");
  }
  phase::metric("rank1_pid", std::to_string(pid));
  return pid;
}

// Leaves without destructors or atexit handlers: NCCL's threads and a kernel that
// waits for the dead peer must not be joined or synchronised on the way out.
[[noreturn]] void leave(int code) {
  std::fflush(nullptr);
  ::_exit(code);
}

// Polls until NCCL reports an asynchronous error on any communicator or the wait runs
// out. Returns the error's name, or "" when none came.
std::string wait_for_error(const NcclLibrary& nccl, const std::vector<nccl_abi::ncclComm_t>& comms, double wait_s) {
  const double start = monotonic_now();
  for (;;) {
    for (auto comm : comms) {
      nccl_abi::ncclResult_t async = nccl_abi::kSuccess;
      nccl.check(nccl.api().CommGetAsyncError(comm, &async), "ncclCommGetAsyncError");
      if (async != nccl_abi::kSuccess && async != nccl_abi::kInProgress) {
        phase::metric("seconds_to_error", monotonic_now() - start);
        return nccl.api().GetErrorString ? nccl.api().GetErrorString(async) : std::to_string(async);
      }
    }
    if (wait_s > 0 && monotonic_now() - start >= wait_s) return "";
    ::usleep(10 * 1000);
  }
}

// Rank 0 after its last all-reduces are posted: the peer dies (or idles), rank 0 waits
// for NCCL's error as a watchdog would, then aborts every communicator. Either the main
// thread or a second one runs it (--abort-from).
void wait_for_peer_then_abort(const Options& o, const NcclLibrary& nccl, const std::vector<nccl_abi::ncclComm_t>& comms,
                              workload::SpawnedRank& rank1) {
  if (o.peer_death == PeerDeath::Idle) {
    // Rank 1 stays alive in pause(), in no NCCL call; it dies with rank 0 (its parent-death signal).
    if (::kill(rank1.pid, 0) != 0) throw InfraError("rank 1 is not alive and idle");
    phase::mark("peer_idle");
  } else {
    if (o.peer_death == PeerDeath::KilledAfterPost) {
      ::usleep(200 * 1000);  // the kernels are running and waiting on rank 1
      ::kill(rank1.pid, SIGKILL);
    }
    const int status = rank1.wait();
    if (status == -1 || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
      throw InfraError("rank 1 did not die by SIGKILL (status " + std::to_string(status) + ")");
    phase::mark("peer_dead");
  }

  const std::string error = wait_for_error(nccl, comms, o.error_wait_s);
  phase::metric("error_reported", error.empty() ? 0.0 : 1.0);
  if (error.empty()) {
    phase::mark("error_wait_expired");
  } else {
    phase::metric("async_error", error);
    phase::mark("error_reported");
  }
  if (o.after_error == AfterError::Exit) leave(0);
  phase::mark("abort_begin");
  if (o.abort_order == AbortOrder::Grouped) {
    nccl.check(nccl.api().GroupStart(), "ncclGroupStart");
    for (auto comm : comms) nccl.check(nccl.api().CommAbort(comm), "ncclCommAbort");
    nccl.check(nccl.api().GroupEnd(), "ncclGroupEnd");
  } else {
    for (size_t c = 0; c < comms.size(); ++c) {
      nccl.check(nccl.api().CommAbort(comms[c]), "ncclCommAbort");
      if (c + 1 < comms.size()) phase::mark("comm" + std::to_string(c) + "_aborted");
    }
  }
  phase::mark("abort_end");
}

int run(const Options& o) {
  // Before NCCL and CUDA read them: each rank its own NCCL host (NET/Socket between
  // ranks on one GPU).
  if (!workload::become_one_gpu_rank("hangbench-pd-rank", o.rank))
    return workload_exit::kInfrastructure;  // rank 0 is gone
  ::setenv("RANK", std::to_string(o.rank).c_str(), 1);
  ::setenv("WORLD_SIZE", "2", 1);
  std::optional<NcclLibrary> nccl = workload::load_nccl_marking_phases(o.nccl_lib);

  std::vector<nccl_abi::ncclUniqueId> ids(static_cast<size_t>(o.comms));
  workload::SpawnedRank rank1;
  if (o.rank == 0) {
    for (auto& id : ids) nccl->check(nccl->api().GetUniqueId(&id), "ncclGetUniqueId");
    rank1.pid = start_rank1(o, ids);
  } else {
    ids[0] = workload::unique_id_from_hex(o.unique_id_hex);
    if (o.comms > 1) ids[1] = workload::unique_id_from_hex(o.second_unique_id_hex);
  }

  // A buffer, and so a stream, per communicator: the last all-reduces must run side by
  // side, not one queued behind the other.
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (int c = 0; c < o.comms; ++c) buffers.push_back(open_device_buffer(o.device, o.count));
  phase::metric("gpu_architecture", buffers[0]->architecture());
  phase::mark("device_ready");

  // Both ranks initialise the communicators in the same order (each init waits for its peer).
  std::vector<nccl_abi::ncclComm_t> comms(static_cast<size_t>(o.comms), nullptr);
  try {
    for (size_t c = 0; c < comms.size(); ++c)
      nccl->check(nccl->api().CommInitRank(&comms[c], 2, ids[c], o.rank), "ncclCommInitRank");
  } catch (const std::exception& e) {
    throw InfraError(std::string("did not initialise: ") + e.what());
  }
  phase::mark("init_done");

  auto all_reduce = [&](size_t c) {
    DeviceBuffer& b = *buffers[c];
    nccl->check(nccl->api().AllReduce(b.data(), b.data(), static_cast<size_t>(b.count()), nccl_abi::kFloat32,
                                      nccl_abi::kSum, comms[c], b.stream()),
                "ncclAllReduce");
  };
  bool correct = true;
  for (int round = 0; round < o.warmups; ++round) {
    const float value = 1.0f + static_cast<float>(round);
    for (size_t c = 0; c < comms.size(); ++c) {
      buffers[c]->upload(std::vector<float>(static_cast<size_t>(buffers[c]->count()), value));
      all_reduce(c);
      for (float got : buffers[c]->download())
        if (std::fabs(got - 2.0f * value) > 0) correct = false;
    }
  }
  phase::metric("allreduce_correct", correct ? 1.0 : 0.0);
  phase::mark("warmup_done");
  if (!correct) return workload_exit::kWrongResult;

  if (o.rank == 1) {
    if (o.peer_death == PeerDeath::Self) {
      workload::log_line("rank 1 dies now (SIGKILL), its communicators alive");
      std::fflush(nullptr);
      ::raise(SIGKILL);
    }
    for (;;) ::pause();  // alive but idle, in no NCCL call, until rank 0 kills it
  }

  for (size_t c = 0; c < comms.size(); ++c) all_reduce(c);  // each can only end with an error now
  phase::mark("collective_posted");
  if (o.abort_from == AbortFrom::Main) {
    wait_for_peer_then_abort(o, *nccl, comms, rank1);
    leave(0);
  }
  // A watchdog thread (NVIDIA/nccl issue 992): it waits for the error and aborts while the
  // main thread stays in CUDA calls, first waiting for the kernels the abort should stop.
  // Its buffer before the thread starts: a refusal (exit 3) must not leave a thread running.
  auto probe = open_device_buffer(o.device, 1024);
  std::atomic<bool> abort_done{false};
  std::exception_ptr watchdog_error;  // rethrown on the main thread: exit codes are decided there
  std::thread watchdog([&] {
    try {
      wait_for_peer_then_abort(o, *nccl, comms, rank1);
    } catch (...) {
      watchdog_error = std::current_exception();
    }
    abort_done = true;
  });
  try {
    for (auto& b : buffers) b->synchronize();
    phase::mark("main_sync_returned");
    const std::vector<float> ones(1024, 1.0f);
    while (!abort_done) {
      probe->upload(ones);
      probe->download();
    }
  } catch (const std::exception& e) {
    // An aborted kernel may leave an error on its stream: the main thread's CUDA calls
    // failing is an outcome, not a hang; the abort's end is what the phases time.
    phase::metric("main_cuda_error", e.what());
  }
  watchdog.join();
  if (watchdog_error) std::rethrow_exception(watchdog_error);
  leave(0);
}

}  // namespace
}  // namespace hangbench::nccl_peer_death

int main(int argc, char** argv) {
  using namespace hangbench::nccl_peer_death;
  return hangbench::workload::workload_main(
      "nccl_peer_death", argc, argv, parse_options, [](const Options& o) { return run(o); },
      [argv](const auto& options) {
        if (options.rank == 0) hangbench::workload::run_as_rank0_of(2, argv);
      });
}
