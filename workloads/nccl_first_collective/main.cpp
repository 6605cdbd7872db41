// nccl_first_collective: NCCL 2.22.3 moved the connection of a communicator's rings from
// ncclCommInitRank to the first collective that uses them (its release note: "Move buffer
// allocation and connection establishment to the first collective"; NCCL_RUNTIME_CONNECT=0
// restores the old order). A program may post an all-reduce and then, before waiting for
// it, signal a peer that posts its own only on that signal: correct while a post only
// queues a kernel, a hang once the post connects the ring, because the connection needs
// the peer inside NCCL.
//
// Rank 0 (run again with RANK=0 WORLD_SIZE=2 when started without them, so that its
// environment names the job as a launcher's would) loads NCCL, makes the unique id,
// opens a pipe and starts rank 1 (this program
// again, its own NCCL host through NCCL_HOSTID, so the ranks talk through NET/Socket)
// with the pipe's read end. Rank 0 posts its first all-reduce, then writes one byte;
// rank 1 reads it, then posts its all-reduce. With --order=warmup-first both first run
// one all-reduce together (the program's own remedy).
//
// Phases (rank 0): start, nccl_loaded, device_ready, init_done, [warmup_done],
// collective_begin, collective_posted, signal_sent, collective_end. Rank 1 marks
// signal_wait and signal_received instead of posted/sent. Exit codes: 0 healthy; 1 a
// wrong sum; 2 usage; 3 infrastructure (no GPU, NCCL not loadable, init failed, rank 1
// could not start); 4 other error.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "connect_expectation.hpp"
#include "device_buffer.hpp"
#include "first_collective_options.hpp"
#include "log_line.hpp"
#include "nccl_loader.hpp"
#include "nccl_rank_start.hpp"
#include "phase.hpp"
#include "spawned_rank.hpp"
#include "unique_id_hex.hpp"
#include "workload_exit_codes.hpp"
#include "workload_main.hpp"

namespace hangbench::nccl_first_collective {
namespace {

using nccl_abi::NcclLibrary;
using nccl_teardown::open_device_buffer;

using workload::InfraError;

const char* order_word(Order order) { return order == Order::WarmupFirst ? "warmup-first" : "post-then-signal"; }

// The signal pipe: rank 1 inherits the read end only (the write end closes on exec), so
// rank 0 is the one writer a reader can wait for.
struct SignalPipe {
  int read_end = -1;
  int write_end = -1;
};

SignalPipe open_signal_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw InfraError("could not open the signal pipe");
  if (::fcntl(fds[0], F_SETFD, 0) != 0) throw InfraError("could not pass the signal pipe on");
  return {fds[0], fds[1]};
}

pid_t start_rank1(const Options& o, const nccl_abi::ncclUniqueId& id, int read_end) {
  pid_t pid = 0;
  try {
    pid = workload::spawn_self(
        {"/proc/self/exe", "--nccl-lib=" + o.nccl_lib, "--rank=1", "--unique-id=" + workload::unique_id_to_hex(id),
         "--signal-fd=" + std::to_string(read_end), "--count=" + std::to_string(o.count),
         std::string("--order=") + order_word(o.order), "--device=" + std::to_string(o.device)},
        workload::environment_for_rank(1, 2));
  } catch (const std::runtime_error&) {
    throw InfraError("could not start rank 1");
  }
  phase::metric("rank1_pid", std::to_string(pid));
  return pid;
}

void wait_for_signal(int fd) {
  char byte = 0;
  ssize_t got = 0;
  do {
    got = ::read(fd, &byte, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1) throw std::runtime_error("rank 0 closed the signal pipe without signalling");
}

int run(const Options& o) {
  // Before NCCL and CUDA read it: each rank its own NCCL host (NET/Socket on one GPU).
  if (!workload::become_one_gpu_rank("hangbench-fc-rank", o.rank))
    return workload_exit::kInfrastructure;  // rank 0 is gone
  std::optional<NcclLibrary> nccl = workload::load_nccl_marking_phases(o.nccl_lib);

  nccl_abi::ncclUniqueId id{};
  workload::SpawnedRank rank1;
  SignalPipe signal;
  if (o.rank == 0) {
    nccl->check(nccl->api().GetUniqueId(&id), "ncclGetUniqueId");
    signal = open_signal_pipe();
    rank1.pid = start_rank1(o, id, signal.read_end);
    ::close(signal.read_end);
  } else {
    id = workload::unique_id_from_hex(o.unique_id_hex);
    signal.read_end = o.signal_fd;
  }

  const auto buffer = open_device_buffer(o.device, o.count);
  phase::metric("gpu_architecture", buffer->architecture());
  // Whether this release, driver and environment connect at the first collective at all:
  // without cuMem a 2.22.3+ cell that reads "no hang" says nothing about the entry.
  const bool cumem = buffer->cumem_supported();
  phase::metric("cumem_supported", cumem ? 1.0 : 0.0);
  phase::metric("connects_at_first_collective",
                connects_at_first_collective(nccl->version_code(), cumem, std::getenv("NCCL_CUMEM_ENABLE"),
                                             std::getenv("NCCL_RUNTIME_CONNECT"))
                    ? 1.0
                    : 0.0);
  phase::mark("device_ready");

  nccl_abi::ncclComm_t comm = nullptr;
  try {
    nccl->check(nccl->api().CommInitRank(&comm, 2, id, o.rank), "ncclCommInitRank");
  } catch (const std::exception& e) {
    throw InfraError(std::string("did not initialise: ") + e.what());
  }
  phase::mark("init_done");

  bool correct = true;
  auto post = [&](float value) {
    buffer->upload(std::vector<float>(static_cast<size_t>(buffer->count()), value));
    nccl->check(nccl->api().AllReduce(buffer->data(), buffer->data(), static_cast<size_t>(buffer->count()),
                                      nccl_abi::kFloat32, nccl_abi::kSum, comm, buffer->stream()),
                "ncclAllReduce");
  };
  auto check = [&](float value) {
    for (float got : buffer->download())
      if (std::fabs(got - 2.0f * value) > 0) correct = false;
  };
  if (o.order == Order::WarmupFirst) {
    post(3.0f);
    check(3.0f);
    phase::mark("warmup_done");
  }

  phase::mark("collective_begin");
  if (o.rank == 0) {
    post(1.0f);
    phase::mark("collective_posted");
    const char byte = 1;
    if (::write(signal.write_end, &byte, 1) != 1) throw std::runtime_error("could not signal rank 1");
    phase::mark("signal_sent");
  } else {
    phase::mark("signal_wait");
    wait_for_signal(signal.read_end);
    phase::mark("signal_received");
    post(1.0f);
  }
  check(1.0f);
  phase::metric("allreduce_correct", correct ? 1.0 : 0.0);
  phase::mark("collective_end");
  nccl->check(nccl->api().CommDestroy(comm), "ncclCommDestroy");

  if (rank1.pid > 0) {
    if (const int rank1_exit = rank1.wait_for_clean_exit("rank 1"); rank1_exit != 0) return rank1_exit;
  }
  return correct ? 0 : workload_exit::kWrongResult;
}

}  // namespace
}  // namespace hangbench::nccl_first_collective

int main(int argc, char** argv) {
  using namespace hangbench::nccl_first_collective;
  return hangbench::workload::workload_main(
      "nccl_first_collective", argc, argv, parse_options, [](const Options& o) { return run(o); },
      [argv](const auto& options) {
        if (options.rank == 0) hangbench::workload::run_as_rank0_of(2, argv);
      });
}
