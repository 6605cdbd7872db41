// mpi_progress: the GPU-free half of TensorRT-LLM's PP deadlock (PR #20030).
//
// Rank 0 (sender): its executor thread takes the real CPython GIL, posts an
// MPI_Isend larger than the rendezvous threshold, then blocks, still holding
// the GIL, in read() on a loopback socket: a native call that returns only
// after rank 1 has received the message, and that never enters MPI.
// Rank 1 (receiver): MPI_Recv, then writes the byte count on the socket.
// Under rendezvous the send completes only if rank 0 re-enters MPI, so the
// progress source decides: none -> hang; pump (Python thread, needs the GIL)
// -> hang; native (MpiProgressThread, no GIL) -> completes.
//
// Exit codes (workloads/common/workload_exit_codes.hpp): 0 done, 2 usage/configuration,
// 3 infrastructure (MPI, socket), 5 the hang-detected path (--watchdog) fired.
#include <mpi.h>
#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "embedded_python.hpp"
#include "log_line.hpp"
#include "phase.hpp"
#include "progress_lifecycle.hpp"
#include "progress_source.hpp"
#include "rendezvous_check.hpp"
#include "rendezvous_threshold.hpp"
#include "reply_channel.hpp"
#include "workload_exit_codes.hpp"
#include "workload_options.hpp"

namespace mp = hangbench::mpi_progress;
namespace py = hangbench::embedded_python;
namespace phase = hangbench::phase;

namespace {

constexpr int kPayloadTag = 1;  // ordinary application tag, never the reserved probe tag
constexpr int kExitUsage = hangbench::workload_exit::kUsage;
constexpr int kExitInfra = hangbench::workload_exit::kInfrastructure;
constexpr int kExitHangDetected = hangbench::workload_exit::kHangDetected;

// Aborts the whole job: a rank that exits alone would leave its peer blocked.
[[noreturn]] void abort_job(int code, const std::string& message) {
  hangbench::workload::log_line(message);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void record_configuration(const mp::WorkloadOptions& options, const mp::RendezvousThreshold& threshold) {
  phase::metric("progress", mp::to_string(options.progress));
  phase::metric("message_bytes", static_cast<double>(options.message_bytes));
  phase::metric("rendezvous_threshold_bytes", static_cast<double>(threshold.bytes));
  phase::metric("rendezvous_threshold_source", threshold.source);
  phase::metric("ompi_pml", threshold.pml);
  phase::metric("ompi_btl", threshold.btl);
  phase::metric("python_version", py::Interpreter::version());
}

// Rank 0's executor: GIL -> Isend -> blocked in read() with the GIL -> release -> Wait.
void run_sender_executor(const mp::WorkloadOptions& options, mp::ReplyChannel& channel, std::promise<void>& released) {
  pthread_setname_np(pthread_self(), "executor");
  std::vector<char> payload(options.message_bytes, 'x');
  MPI_Request request = MPI_REQUEST_NULL;
  std::uint64_t acknowledged = 0;
  {
    py::GilHold gil;  // taken first, so no Python thread can run from here on
    MPI_Isend(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 1, kPayloadTag, MPI_COMM_WORLD, &request);
    phase::mark("isend_posted");
    phase::metric("executor_holds_gil", py::this_thread_holds_gil() ? 1.0 : 0.0);
    phase::mark("executor_blocked");
    acknowledged = channel.read_u64();  // native, blocking, outside MPI, GIL held
    phase::mark("executor_released");
  }
  released.set_value();
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (acknowledged != options.message_bytes) {
    abort_job(kExitInfra, "rank 1 acknowledged " + std::to_string(acknowledged) + " bytes, sent " +
                              std::to_string(options.message_bytes));
  }
}

void run_receiver(const mp::WorkloadOptions& options, mp::ReplyChannel& channel) {
  std::vector<char> payload(options.message_bytes);
  MPI_Status status;
  MPI_Recv(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, kPayloadTag, MPI_COMM_WORLD, &status);
  int received = 0;
  MPI_Get_count(&status, MPI_CHAR, &received);
  phase::mark("message_received");
  channel.write_u64(static_cast<std::uint64_t>(received));
}

}  // namespace

int main(int argc, char** argv) {
  hangbench::workload::set_log_name("mpi_progress");
  const auto options = mp::parse_workload_options(argc, argv);
  if (!options) return kExitUsage;

  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    hangbench::workload::log_line("MPI_Init_thread failed");
    return kExitInfra;
  }
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world != 2) abort_job(kExitUsage, "needs exactly 2 ranks (mpirun -np 2), got " + std::to_string(world));

  std::string error;
  const auto threshold = mp::read_rendezvous_threshold(error);
  if (!threshold) abort_job(kExitUsage, error);
  const hangbench::rendezvous::ThresholdReading reading{{{threshold->source, threshold->bytes}}};
  if (auto problem = hangbench::rendezvous::rendezvous_problem(options->message_bytes, reading)) {
    abort_job(kExitUsage, "--bytes: " + *problem);
  }

  py::Interpreter interpreter;  // every rank embeds Python, as a PyExecutor does
  if (rank == 0) record_configuration(*options, *threshold);
  phase::metric("mpi_thread_multiple", provided == MPI_THREAD_MULTIPLE ? 1.0 : 0.0);

  // The side channel is set up before the critical section, through MPI.
  std::unique_ptr<mp::ReplyChannel> channel;
  int port = 0;
  try {
    if (rank == 0) {
      channel = std::make_unique<mp::ReplyChannel>(mp::ReplyChannel::listen_on_loopback());
      port = channel->port();
    }
    MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1)
      channel =
          std::make_unique<mp::ReplyChannel>(mp::ReplyChannel::connect_to_loopback(static_cast<std::uint16_t>(port)));
    if (rank == 0) channel->accept_peer();
  } catch (const std::exception& e) {
    abort_job(kExitInfra, e.what());
  }

  std::ostringstream log;
  auto progress = mp::make_progress_source(*options, MPI_COMM_WORLD, world, log);
  if (rank == 0) std::cerr << log.str();
  // Marked before the barrier, so every rank-1 phase precedes rank 0's
  // executor_blocked and the last phase of a hung trial is executor_blocked.
  phase::mark("init_done");
  MPI_Barrier(MPI_COMM_WORLD);

  try {
    if (rank == 0) {
      std::promise<void> released;
      auto released_future = released.get_future();
      std::thread executor([&] { run_sender_executor(*options, *channel, released); });
      if (options->watchdog_s > 0 &&
          released_future.wait_for(std::chrono::duration<double>(options->watchdog_s)) == std::future_status::timeout) {
        // The hang-detected path: stop progress before MPI is torn down.
        phase::mark("hang_detected");
        progress->stop_for_hang();
        phase::metric("probe_count", static_cast<double>(progress->probe_count()));
        phase::mark("teardown_begin");
        hangbench::workload::logf("executor still blocked after %g s: hang detected, progress stopped, aborting MPI",
                                  options->watchdog_s);
        MPI_Abort(MPI_COMM_WORLD, kExitHangDetected);
        std::_Exit(kExitHangDetected);
      }
      executor.join();
    } else {
      run_receiver(*options, *channel);
    }
  } catch (const std::exception& e) {
    abort_job(kExitInfra, e.what());
  }
  phase::mark("work_done");

  phase::mark("teardown_begin");
  progress->stop_for_shutdown();  // before MPI_Finalize, always
  phase::metric("probe_count", static_cast<double>(progress->probe_count()));
  phase::metric("progress_running_after_stop", progress->running() ? 1.0 : 0.0);
  progress.reset();
  channel.reset();
  MPI_Finalize();
  phase::mark("teardown_end");
  return 0;
}
