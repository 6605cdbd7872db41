// ddp_abort: a DDP-style training job whose teardown goes down PyTorch's abort
// path while DataLoader-like workers are alive. See README.md.
#include <torch/torch.h>

#include <cstdio>
#include <optional>
#include <thread>

#include "communicator.hpp"
#include "errors.hpp"
#include "loader_workers.hpp"
#include "log.hpp"
#include "nccl_debug_log.hpp"
#include "nccl_loader.hpp"
#include "options.hpp"
#include "phase.hpp"
#include "placement.hpp"
#include "trainer.hpp"
#include "workload_exit_codes.hpp"

namespace hangbench::ddp {
namespace {

constexpr int kExitOk = hangbench::workload_exit::kHealthy;
constexpr int kExitWrongResult = hangbench::workload_exit::kWrongResult;
constexpr int kExitUsage = hangbench::workload_exit::kUsage;
constexpr int kExitInfrastructure = hangbench::workload_exit::kInfrastructure;
constexpr int kExitRunError = hangbench::workload_exit::kRunError;

loader::PoolOptions pool_options(const Options& options, const loader::BatchShape& shape) {
  loader::PoolOptions pool;
  pool.workers = options.num_workers;
  pool.method = options.workers == WorkerGate::Spawn ? loader::StartMethod::Spawn : loader::StartMethod::Fork;
  pool.shape = shape;
  return pool;
}

std::string join_pids(const std::vector<pid_t>& pids) {
  std::string out;
  for (pid_t p : pids) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

std::optional<loader::WorkerPool> start_pool(const Options& options, const loader::BatchShape& shape,
                                             const char* when) {
  loader::WorkerPool pool = loader::WorkerPool::start(pool_options(options, shape));
  const std::string pids = join_pids(pool.pids());
  log("%d loader worker(s) %s %s: pids %s", pool.size(), options.workers == WorkerGate::Spawn ? "spawned" : "forked",
      when, pids.c_str());
  phase::metric("worker_pids", pids);
  return pool;
}

void report_process_nccl() {
  // Which NCCL the dynamic linker gives everyone (torch's own, or the preloaded build).
  try {
    auto in_process = nccl_abi::NcclLibrary::from_process();
    phase::metric("nccl_version_process", in_process.version());
    phase::metric("nccl_path_process", in_process.resolved_path());
  } catch (const std::exception& e) {
    log("no NCCL resolvable in the global scope: %s", e.what());
  }
}

int run(const Options& options, const World& world) {
  const int visible = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  const workload::DeviceChoice gpu =
      workload::device_for_rank(options.placement, world.local_rank, world.local_size, visible);
  if (gpu.device < 0) {
    if (visible < 1) throw InfrastructureError(gpu.error);
    throw std::invalid_argument(gpu.error);
  }
  const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu.device));
  // Before NCCL reads its environment (the communicator is made below).
  const std::string host = workload::claim_nccl_host(options.placement, world.rank);
  const std::string debug_log = workload::route_nccl_debug_log(options.rendezvous_dir, world.rank);
  phase::metric("placement", workload::to_string(options.placement));
  phase::metric("world_size", static_cast<double>(world.size));
  if (!host.empty()) phase::metric("nccl_hostid", host);
  log("rank %d of %d on %s (%s%s): backend=%s teardown=%s workers=%s pool=%s", world.rank, world.size,
      device.str().c_str(), workload::to_string(options.placement).c_str(),
      host.empty() ? "" : (", NCCL_HOSTID=" + host).c_str(), to_string(options.backend).c_str(),
      to_string(options.teardown).c_str(), to_string(options.workers).c_str(), to_string(options.pool).c_str());
  report_process_nccl();

  loader::BatchShape shape;
  shape.batch_size = options.batch_size;
  shape.seed = 1234 + static_cast<uint64_t>(world.rank);  // each rank its own shard

  std::optional<loader::WorkerPool> pool;
  if (options.workers == WorkerGate::Before && rank_starts_workers(options, world.rank))
    pool = start_pool(options, shape, "before communicator init");

  std::unique_ptr<Communicator> communicator =
      options.backend == Backend::Direct ? make_direct_communicator(options) : make_c10d_communicator(options);
  phase::metric("nccl_version", communicator->nccl_version());
  phase::metric("nccl_path", communicator->nccl_path());

  const double init_start = phase::now_seconds();
  communicator->init(world, device);
  const double init_s = phase::now_seconds() - init_start;
  phase::mark("init_done");
  phase::metric("init_s", init_s);
  log("NCCL %s communicator initialised in %.3f s", communicator->nccl_version().c_str(), init_s);

  const bool workers_after = (options.workers == WorkerGate::After || options.workers == WorkerGate::Spawn) &&
                             rank_starts_workers(options, world.rank);
  if (workers_after && options.pool == PoolPolicy::Persistent)
    pool = start_pool(options, shape, "after communicator init");

  Trainer trainer(options, world, device, *communicator, shape);
  std::vector<float> losses;
  uint32_t batch_index = 0;
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    if (workers_after && options.pool == PoolPolicy::PerEpoch) {
      pool.reset();  // the previous epoch's workers exit, as when a DataLoader iterator is exhausted
      pool = start_pool(options, shape, ("for epoch " + std::to_string(epoch)).c_str());
    }
    for (int s = 0; s < options.steps_per_epoch; ++s, ++batch_index) {
      loader::Batch batch = pool ? pool->fetch(batch_index) : loader::make_synthetic_batch(shape, batch_index);
      losses.push_back(trainer.step(batch));
    }
    log("epoch %d: loss %.5f", epoch, losses.back());
  }
  const AllReduceCheck check = trainer.check_all_reduce();
  phase::mark("work_done");
  if (!debug_log.empty()) {
    phase::metric("nccl_transport", workload::join_transports(workload::nccl_transports_in_file(debug_log)));
  }
  phase::metric("loss_first", losses.front());
  phase::metric("loss_last", losses.back());
  phase::metric("steps", static_cast<double>(losses.size()));
  phase::metric("allreduce_correct", check.correct ? 1.0 : 0.0);
  phase::metric("allreduce_max_error", check.max_abs_error);
  log("%zu steps, loss %.5f -> %.5f; all-reduce check %s (max error %g, expected %g)", losses.size(), losses.front(),
      losses.back(), check.correct ? "correct" : "WRONG", check.max_abs_error, check.expected);

  std::this_thread::sleep_for(std::chrono::duration<double>(options.linger_s));
  const std::string live = pool ? join_pids(pool->pids()) : std::string("none");
  log("teardown '%s' begins; loader workers alive: %s", to_string(options.teardown).c_str(), live.c_str());
  phase::mark("teardown_begin");
  TeardownReport report;
  switch (options.teardown) {
    case Teardown::Watchdog: {
      torch::Tensor stalled = trainer.gradient_sized_buffer();
      report = communicator->abort_by_watchdog(stalled, options.collective_timeout_s);
      phase::metric("watchdog_fired_after_s", report.watchdog_fired_after_s);
      phase::metric("abort_s", report.seconds);
      break;
    }
    case Teardown::Exit:
      report = communicator->abort_at_exit();
      phase::metric("abort_s", report.seconds);
      break;
    case Teardown::Destroy:
      report = communicator->destroy();
      phase::metric("destroy_s", report.seconds);
      break;
  }
  phase::mark("teardown_end");
  if (report.gate_opened_by_safety) log("warning: the stalled stream was released by its safety deadline");
  log("teardown done in %.3f s: %s", report.seconds, report.detail.c_str());

  pool.reset();  // stop and reap the workers
  // Left alive on purpose: ProcessGroupNCCL's destructor joins its watchdog and
  // waits up to 1 s for its own abort future after what is measured (teardown_end);
  // on the H200 it kept 8 of 182 c10d watchdog trials past their 5 s teardown
  // deadline. The process leaves with _Exit right after.
  (void)communicator.release();
  return check.correct ? kExitOk : kExitWrongResult;
}

}  // namespace
}  // namespace hangbench::ddp

int main(int argc, char** argv) {
  using namespace hangbench::ddp;
  namespace loader = hangbench::loader;
  if (loader::is_worker_invocation(argc, argv)) {
    return loader::spawned_worker_main(std::vector<std::string>(argv + 1, argv + argc));
  }
  const auto env = current_environment();
  ParseOutcome parsed = parse_options(std::vector<std::string>(argv + 1, argv + argc), env);
  if (!parsed.options) {
    std::fprintf(parsed.exit_code == 0 ? stdout : stderr, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  int code = kExitOk;
  try {
    const World world = world_from_env(env);
    log_rank() = world.rank;
    code = run(*parsed.options, world);
  } catch (const std::invalid_argument& e) {
    log("configuration error: %s", e.what());
    code = kExitUsage;
  } catch (const InfrastructureError& e) {
    log("infrastructure error: %s", e.what());
    code = kExitInfrastructure;
  } catch (const std::exception& e) {
    log("error during the run: %s", e.what());
    code = kExitRunError;
  }
  // Leave without static destructors: libtorch/CUDA teardown after an abort is not
  // what this program measures, and may itself block or crash.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}
