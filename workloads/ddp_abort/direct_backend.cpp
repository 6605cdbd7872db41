// Backend "direct": the chosen libnccl.so is dlopen'd and called as a training
// framework would call it, with a watchdog thread of our own for the timeout path.
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <thread>

#include "communicator.hpp"
#include "cuda_runtime.hpp"
#include "errors.hpp"
#include "log.hpp"
#include "nccl_loader.hpp"
#include "rendezvous.hpp"
#include "stream_gate.hpp"

namespace hangbench::ddp {

namespace {

using namespace hangbench::nccl_abi;

constexpr double kRendezvousTimeoutS = 120;

class DirectCommunicator final : public Communicator {
 public:
  explicit DirectCommunicator(const Options& options) : options_(options), library_(load(options.nccl_lib)) {
    log("direct backend: dlopen'd %s, NCCL %s (code %d)", library_.resolved_path().c_str(), library_.version().c_str(),
        library_.version_code());
  }

  void init(const World& world, const torch::Device& device) override {
    device_index_ = device.index();
    world_ = world;
    c10::cuda::set_device(device_index_);
    ncclUniqueId id{};
    const std::string blob_name = "nccl_unique_id.direct";
    if (world.rank == 0) {
      library_.check(library_.api().GetUniqueId(&id), "ncclGetUniqueId");
      if (world.size > 1)
        publish_blob(options_.rendezvous_dir, blob_name, std::string(id.internal, sizeof id.internal));
    } else {
      std::string bytes = await_blob(options_.rendezvous_dir, blob_name, sizeof id.internal, kRendezvousTimeoutS);
      std::copy(bytes.begin(), bytes.end(), id.internal);
    }
    library_.check(library_.api().CommInitRank(&comm_, world.size, id, world.rank), "ncclCommInitRank");
  }

  void all_reduce_sum(torch::Tensor& tensor) override {
    library_.check(library_.api().AllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                                            kFloat32, kSum, comm_, current_stream()),
                   "ncclAllReduce");
    check_async_error();
  }

  TeardownReport abort_by_watchdog(torch::Tensor& tensor, double timeout_s) override {
    const CudaRuntime& cuda = CudaRuntime::get();
    const Stall stall = resolve_stall(options_.stall, world_.size);
    // missing-rank: the last rank is "stuck elsewhere" and never posts; the others'
    // kernels wait for it in flight, and its own watchdog aborts a communicator with
    // nothing posted. gate: every rank's collective waits behind a held stream.
    const bool posts = !(stall == Stall::MissingRank && world_.rank == world_.size - 1);
    gate_ = std::make_unique<StreamGate>(timeout_s + 60);
    CudaRuntime::Stream stream = current_stream();
    if (stall == Stall::Gate) gate_->close_on(stream);
    const double stall_start = phase::now_seconds();
    if (posts) {
      library_.check(library_.api().AllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                                              kFloat32, kSum, comm_, stream),
                     "ncclAllReduce (the one left to time out)");
    }
    CudaRuntime::Event done = cuda.create_event();
    cuda.record_event(done, stream);
    std::string what = "all_reduce queued behind a stalled stream";
    if (stall == Stall::MissingRank)
      what = posts ? "all_reduce posted; rank " + std::to_string(world_.size - 1) + " will not post it"
                   : std::string("this rank does not post the all_reduce");
    log("stall %s: %s; watchdog deadline %.2f s", to_string(stall).c_str(), what.c_str(), timeout_s);

    // The watchdog, as ProcessGroupNCCL's: polls the collective's end event and the
    // communicator's async error; on timeout it aborts the communicator.
    TeardownReport report;
    std::thread watchdog([&] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ncclResult_t async_error = kSuccess;
        library_.api().CommGetAsyncError(comm_, &async_error);
        const double waited = phase::now_seconds() - stall_start;
        if (async_error != kSuccess && async_error != kInProgress) {
          report.detail = "watchdog saw async NCCL error " + std::string(library_.api().GetErrorString(async_error));
          break;
        }
        bool completed = false;
        try {
          completed = posts && cuda.event_done(done);  // a rank that posted nothing waits its timeout out
        } catch (const std::exception& e) {
          report.detail = std::string("watchdog saw a CUDA error: ") + e.what();
          break;
        }
        if (completed) {
          report.detail = "the collective completed before its deadline (the stall did not hold)";
          break;
        }
        if (waited > timeout_s) {
          report.detail = "watchdog: all_reduce timed out after " + std::to_string(waited) + " s";
          break;
        }
      }
      report.watchdog_fired_after_s = phase::now_seconds() - stall_start;
      log("%s; aborting the communicator (ncclCommAbort)", report.detail.c_str());
      gate_->release();  // a stuck NCCL kernel quits on the abort flag; this stall quits now
      report.seconds = timed_abort();
    });
    watchdog.join();  // a hung ncclCommAbort keeps us here
    report.gate_opened_by_safety = gate_->opened_by_safety_deadline();
    return report;
  }

  TeardownReport abort_at_exit() override {
    TeardownReport report;
    report.seconds = timed_abort();
    report.detail = "ncclCommAbort at exit";
    return report;
  }

  TeardownReport destroy() override {
    TeardownReport report;
    const double start = phase::now_seconds();
    ncclResult_t rc = library_.api().CommDestroy(comm_);
    report.seconds = phase::now_seconds() - start;
    comm_ = nullptr;
    library_.check(rc, "ncclCommDestroy");
    report.detail = "ncclCommDestroy";
    return report;
  }

  std::string nccl_version() const override { return library_.version(); }
  std::string nccl_path() const override { return library_.resolved_path(); }

 private:
  static NcclLibrary load(const std::string& path) {
    try {
      return NcclLibrary::open(path);
    } catch (const NcclLoadError& e) {
      throw InfrastructureError(e.what());
    }
  }

  CudaRuntime::Stream current_stream() const {
    return at::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_index_)).stream();
  }

  void check_async_error() {
    ncclResult_t async_error = kSuccess;
    library_.check(library_.api().CommGetAsyncError(comm_, &async_error), "ncclCommGetAsyncError");
    if (async_error != kSuccess && async_error != kInProgress) library_.check(async_error, "NCCL async error");
  }

  double timed_abort() {
    const double start = phase::now_seconds();
    ncclResult_t rc = library_.api().CommAbort(comm_);
    const double seconds = phase::now_seconds() - start;
    comm_ = nullptr;
    if (rc != kSuccess) log("ncclCommAbort returned %d (%s)", rc, library_.api().GetErrorString(rc));
    return seconds;
  }

  Options options_;
  NcclLibrary library_;
  ncclComm_t comm_ = nullptr;
  int device_index_ = 0;
  World world_{};
  std::unique_ptr<StreamGate> gate_;  // outlives the host function that holds the stream
};

}  // namespace

std::unique_ptr<Communicator> make_direct_communicator(const Options& options) {
  return std::make_unique<DirectCommunicator>(options);
}

}  // namespace hangbench::ddp
