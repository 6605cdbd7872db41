// Backend "c10d": PyTorch's own c10d::ProcessGroupNCCL, over whatever NCCL the
// process has (the chosen build and the compat shim, LD_PRELOADed by the matrix),
// so the abort runs ProcessGroupNCCL::abort -> ncclCommAbort as in production.
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdlib>
#include <filesystem>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "communicator.hpp"
#include "cuda_runtime.hpp"
#include "errors.hpp"
#include "log.hpp"
#include "nccl_call_hooks.hpp"
#include "nccl_loader.hpp"
#include "stream_gate.hpp"

namespace hangbench::ddp {

namespace {

constexpr std::chrono::minutes kTrainingTimeout{10};
constexpr double kWatchdogGraceS = 30;  // beyond the PG timeout, before we call the watchdog broken

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

const char* env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

// The NCCL that serves the process's calls, which must be the one the matrix preloaded.
nccl_abi::NcclLibrary nccl_in_process(const std::string& expected_path) {
  nccl_abi::NcclLibrary library = [] {
    try {
      return nccl_abi::NcclLibrary::from_process();
    } catch (const nccl_abi::NcclLoadError& e) {
      throw InfrastructureError(std::string("no usable NCCL in the process: ") + e.what());
    }
  }();
  if (!expected_path.empty() && canonical_or_same(library.resolved_path()) != canonical_or_same(expected_path)) {
    throw InfrastructureError("LD_PRELOAD did not take effect: ncclGetVersion comes from " + library.resolved_path() +
                              " (NCCL " + library.version() + "), not from --nccl-lib " + expected_path +
                              ". LD_PRELOAD='" + env_or("LD_PRELOAD", "") +
                              "'; preload the library together with the compat shim.");
  }
  return library;
}

class C10dCommunicator final : public Communicator {
 public:
  explicit C10dCommunicator(const Options& options) : options_(options), library_(nccl_in_process(options.nccl_lib)) {
    // CleanUpOnly: on a timeout the watchdog aborts the communicators and leaves the
    // process alive (TearDown would kill it with SIGABRT, SkipCleanUp would not abort).
    setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", /*overwrite=*/0);
    // No flight-recorder dump between the timeout and the abort.
    setenv("TORCH_NCCL_DUMP_ON_TIMEOUT", "0", 0);
    // On a timeout the watchdog sleeps 4 x this value before it aborts (torch 2.11:
    // "give time for dumping" to the other ranks), 60 s by default, dump or not.
    // Left at the default, every watchdog trial outlived its hang timeout before
    // ncclCommAbort was even called; 100 ms makes the sleep 0.4 s.
    setenv("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC", "100", 0);
    log("c10d backend: ProcessGroupNCCL over %s, NCCL %s; TORCH_NCCL_ASYNC_ERROR_HANDLING=%s, "
        "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=%s",
        library_.resolved_path().c_str(), library_.version().c_str(), env_or("TORCH_NCCL_ASYNC_ERROR_HANDLING", ""),
        env_or("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC", ""));
  }

  void init(const World& world, const torch::Device& device) override {
    device_ = device;
    c10::cuda::set_device(device.index());
    std::string store_path;
    if (!options_.rendezvous_dir.empty()) {
      store_path = options_.rendezvous_dir + "/c10d_filestore";
    } else if (world.size == 1) {
      store_path = (std::filesystem::temp_directory_path() / ("ddp_abort_store." + std::to_string(getpid()))).string();
      std::filesystem::remove(store_path);
    } else {
      throw InfrastructureError("world size > 1 needs --rendezvous-dir or HANGBENCH_TRIAL_DIR for the FileStore");
    }
    auto store = c10::make_intrusive<c10d::FileStore>(store_path, world.size);
    auto pg_options = c10d::ProcessGroupNCCL::Options::create();
    pg_options->timeout = kTrainingTimeout;
    pg_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, world.rank, world.size, pg_options);
    // ProcessGroupNCCL creates its communicator lazily: the first collective
    // (DDP's parameter broadcast, in a real job) initialises it.
    torch::Tensor warmup = torch::ones({1}, torch::TensorOptions().device(device).dtype(torch::kFloat32));
    all_reduce_sum(warmup);
    c10::cuda::device_synchronize();
  }

  void all_reduce_sum(torch::Tensor& tensor) override {
    std::vector<at::Tensor> tensors{tensor};
    pg_->allreduce(tensors)->wait();
  }

  TeardownReport abort_by_watchdog(torch::Tensor& tensor, double timeout_s) override {
    TeardownReport report;
    pg_->setTimeout(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    gate_ = std::make_unique<StreamGate>(timeout_s + kWatchdogGraceS + 30);
    StreamGate* gate = gate_.get();
    hooks::on_abort_begin([gate] { gate->release(); });
    gate->close_on(at::cuda::getCurrentCUDAStream(device_.index()).stream());
    const double stall_start = phase::now_seconds();
    std::vector<at::Tensor> tensors{tensor};
    stalled_work_ = pg_->allreduce(tensors);  // its NCCL stream waits for the stalled one
    log("all_reduce queued behind a stalled stream; ProcessGroupNCCL timeout %.2f s", timeout_s);
    if (!hooks::wait_begun(hooks::Call::Abort, timeout_s + kWatchdogGraceS)) {
      throw std::runtime_error(
          "ProcessGroupNCCL's watchdog did not call ncclCommAbort within " +
          std::to_string(timeout_s + kWatchdogGraceS) +
          " s of the stall (TORCH_NCCL_ASYNC_ERROR_HANDLING=" + env_or("TORCH_NCCL_ASYNC_ERROR_HANDLING", "") + ")");
    }
    hooks::CallRecord begun = hooks::record(hooks::Call::Abort);
    report.watchdog_fired_after_s = begun.first_begin - stall_start;
    log("ProcessGroupNCCL's watchdog called ncclCommAbort %.2f s after the stall; waiting for it",
        report.watchdog_fired_after_s);
    hooks::wait_all_finished(hooks::Call::Abort);  // a hung abort keeps us here
    hooks::CallRecord done = hooks::record(hooks::Call::Abort);
    report.seconds = done.last_end - done.first_begin;
    report.gate_opened_by_safety = gate->opened_by_safety_deadline();
    report.detail = "ProcessGroupNCCL watchdog abort (" + std::to_string(done.finished) + " ncclCommAbort call(s))";
    phase::metric("nccl_abort_calls", static_cast<double>(done.finished));
    return report;
  }

  TeardownReport abort_at_exit() override {
    TeardownReport report;
    const double start = phase::now_seconds();
    pg_->abort();
    // PyTorch may bound its own wait for the abort; the process still lives until NCCL returns.
    hooks::wait_all_finished(hooks::Call::Abort);
    hooks::CallRecord r = hooks::record(hooks::Call::Abort);
    report.seconds = r.begun > 0 ? r.last_end - r.first_begin : phase::now_seconds() - start;
    report.detail = "ProcessGroupNCCL::abort (" + std::to_string(r.finished) + " ncclCommAbort call(s))";
    phase::metric("nccl_abort_calls", static_cast<double>(r.finished));
    return report;
  }

  TeardownReport destroy() override {
    TeardownReport report;
    const double start = phase::now_seconds();
    pg_->shutdown();
    hooks::wait_all_finished(hooks::Call::Destroy);
    hooks::wait_all_finished(hooks::Call::Abort);  // should a shutdown abort instead, it shows here
    hooks::CallRecord r = hooks::record(hooks::Call::Destroy);
    const int aborts = hooks::record(hooks::Call::Abort).finished;
    report.seconds = r.begun > 0 ? r.last_end - r.first_begin : phase::now_seconds() - start;
    report.detail = "ProcessGroupNCCL::shutdown (" + std::to_string(r.finished) + " ncclCommDestroy, " +
                    std::to_string(aborts) + " ncclCommAbort call(s))";
    phase::metric("nccl_destroy_calls", static_cast<double>(r.finished));
    phase::metric("nccl_abort_calls", static_cast<double>(aborts));
    return report;
  }

  std::string nccl_version() const override { return library_.version(); }
  std::string nccl_path() const override { return library_.resolved_path(); }

 private:
  Options options_;
  nccl_abi::NcclLibrary library_;
  torch::Device device_{torch::kCUDA, 0};
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> pg_;
  c10::intrusive_ptr<c10d::Work> stalled_work_;
  std::unique_ptr<StreamGate> gate_;
};

}  // namespace

std::unique_ptr<Communicator> make_c10d_communicator(const Options& options) {
  return std::make_unique<C10dCommunicator>(options);
}

}  // namespace hangbench::ddp
