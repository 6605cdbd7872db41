#include "options.hpp"

#include <sstream>
#include <stdexcept>

#include "cli.hpp"

extern char** environ;

namespace hangbench::ddp {

std::string to_string(Backend b) { return b == Backend::Direct ? "direct" : "c10d"; }
std::string to_string(Teardown t) {
  switch (t) {
    case Teardown::Watchdog:
      return "watchdog";
    case Teardown::Exit:
      return "exit";
    case Teardown::Destroy:
      return "destroy";
  }
  return "?";
}
std::string to_string(WorkerGate g) {
  switch (g) {
    case WorkerGate::After:
      return "after";
    case WorkerGate::Before:
      return "before";
    case WorkerGate::None:
      return "none";
    case WorkerGate::Spawn:
      return "spawn";
  }
  return "?";
}
std::string to_string(PoolPolicy p) { return p == PoolPolicy::Persistent ? "persistent" : "per-epoch"; }
std::string to_string(Stall s) {
  switch (s) {
    case Stall::Gate:
      return "gate";
    case Stall::MissingRank:
      return "missing-rank";
    case Stall::Auto:
      break;
  }
  return "auto";
}
Stall resolve_stall(Stall requested, int world_size) {
  if (requested != Stall::Auto) return requested;
  return world_size > 1 ? Stall::MissingRank : Stall::Gate;
}

namespace {

const char* kDescription =
    "ddp_abort: a small DDP-style training job on libtorch whose teardown goes down PyTorch's\n"
    "abort path while forked DataLoader-like workers are alive (NCCL 2.17.1 teardown hang).\n"
    "1: the all-reduce result was wrong; 3: no GPU, NCCL not loadable, LD_PRELOAD not in\n"
    "effect; 4: an NCCL or CUDA error during the run.";

std::optional<std::string> lookup(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

int parse_int(const std::string& text, const char* name) {
  size_t used = 0;
  int value = std::stoi(text, &used);
  if (used != text.size()) throw std::invalid_argument(std::string(name) + "='" + text + "' is not an integer");
  return value;
}

// "all" → every rank (empty set); "0,2" → ranks 0 and 2.
std::set<int> parse_worker_ranks(const std::string& text) {
  if (text == "all") return {};
  std::set<int> ranks;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const long rank = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || rank < 0 || rank > 1'000'000) {
      throw workload::UsageError("--worker-ranks: '" + item + "' is not a rank; give all, or ranks such as 0,2");
    }
    ranks.insert(static_cast<int>(rank));
  }
  if (ranks.empty() || text.back() == ',') throw workload::UsageError("--worker-ranks: give all, or ranks such as 0,2");
  return ranks;
}

}  // namespace

bool rank_starts_workers(const Options& options, int rank) {
  return options.worker_ranks.empty() || options.worker_ranks.count(rank) > 0;
}

ParseOutcome parse_options(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  Options o;
  workload::Cli cli("ddp_abort", kDescription);
  CLI::App& app = cli.app();
  const std::map<std::string, Backend> backends{{"direct", Backend::Direct}, {"c10d", Backend::C10d}};
  const std::map<std::string, Teardown> teardowns{
      {"watchdog", Teardown::Watchdog}, {"exit", Teardown::Exit}, {"destroy", Teardown::Destroy}};
  const std::map<std::string, WorkerGate> gates{{"after", WorkerGate::After},
                                                {"before", WorkerGate::Before},
                                                {"none", WorkerGate::None},
                                                {"spawn", WorkerGate::Spawn}};
  const std::map<std::string, PoolPolicy> pools{{"persistent", PoolPolicy::Persistent},
                                                {"per-epoch", PoolPolicy::PerEpoch}};
  app.add_option("--backend", o.backend,
                 "direct: dlopen --nccl-lib and call it; c10d: PyTorch's ProcessGroupNCCL over the "
                 "NCCL in the process (LD_PRELOAD)")
      ->transform(CLI::CheckedTransformer(backends, CLI::ignore_case));
  app.add_option("--nccl-lib", o.nccl_lib, "libnccl.so to use (direct), or to verify is the one in use (c10d)");
  app.add_option("--teardown", o.teardown,
                 "watchdog: a stalled collective times out and a watchdog thread aborts; exit: abort "
                 "at the end; destroy: graceful destroy/shutdown")
      ->transform(CLI::CheckedTransformer(teardowns, CLI::ignore_case));
  const std::map<std::string, Stall> stalls{
      {"auto", Stall::Auto}, {"gate", Stall::Gate}, {"missing-rank", Stall::MissingRank}};
  app.add_option("--stall", o.stall,
                 "watchdog teardown: how the collective is stalled. gate: a host function holds every rank's "
                 "stream; missing-rank: the last rank never posts it; auto: gate at world size 1, missing-rank "
                 "above")
      ->transform(CLI::CheckedTransformer(stalls, CLI::ignore_case));
  app.add_option("--workers", o.workers,
                 "loader workers forked after communicator init, before it, none, or spawned (posix_spawn+exec)")
      ->transform(CLI::CheckedTransformer(gates, CLI::ignore_case));
  app.add_option("--pool", o.pool, "persistent workers, or a fresh pool per epoch")
      ->transform(CLI::CheckedTransformer(pools, CLI::ignore_case));
  app.add_option("--num-workers", o.num_workers, "loader workers")->check(CLI::Range(1, 64));
  std::string worker_ranks = "all";
  app.add_option("--worker-ranks", worker_ranks,
                 "ranks that start loader workers: all, or a comma list such as 0 (the others start none)");
  app.add_option("--epochs", o.epochs)->check(CLI::Range(1, 1000));
  app.add_option("--steps", o.steps_per_epoch, "training steps per epoch")->check(CLI::Range(1, 100000));
  app.add_option("--batch-size", o.batch_size)->check(CLI::Range(1, 65536));
  app.add_option("--hidden", o.hidden, "hidden width of the MLP")->check(CLI::Range(1, 65536));
  app.add_option("--collective-timeout", o.collective_timeout_s,
                 "seconds before the watchdog declares the stalled collective timed out")
      ->check(CLI::Range(0.05, 3600.0));
  app.add_option("--linger", o.linger_s, "seconds between the last step and the teardown")
      ->check(CLI::Range(0.0, 3600.0));
  const std::map<std::string, workload::Placement> placements{{"gpu-per-rank", workload::Placement::GpuPerRank},
                                                              {"shared-gpu", workload::Placement::SharedGpu}};
  app.add_option("--placement", o.placement,
                 "gpu-per-rank: rank on cuda:LOCAL_RANK; shared-gpu: every rank on cuda:0, each its own NCCL "
                 "host (NCCL_HOSTID), joined by NCCL's network transport as across nodes")
      ->transform(CLI::CheckedTransformer(placements, CLI::ignore_case));
  app.add_option("--rendezvous-dir", o.rendezvous_dir,
                 "folder shared by the ranks for the NCCL unique id / FileStore (default $HANGBENCH_TRIAL_DIR)");

  const workload::CliResult parsed = cli.parse(args, [&] {
    if (o.rendezvous_dir.empty()) o.rendezvous_dir = lookup(env, "HANGBENCH_TRIAL_DIR").value_or("");
    if (o.backend == Backend::Direct && o.nccl_lib.empty()) {
      throw workload::UsageError("--backend=direct needs --nccl-lib PATH (the libnccl.so to dlopen)");
    }
    o.worker_ranks = parse_worker_ranks(worker_ranks);
    if (o.pool == PoolPolicy::PerEpoch && o.workers == WorkerGate::Before) {
      throw workload::UsageError(
          "--pool=per-epoch forks every epoch's workers after communicator init; "
          "use --workers=after, or --pool=persistent with --workers=before");
    }
  });
  ParseOutcome out;
  out.exit_code = parsed.exit_code;
  out.message = parsed.message;
  if (parsed.run) out.options = o;
  return out;
}

World world_from_env(const std::map<std::string, std::string>& env) {
  World w;
  auto first = [&](std::initializer_list<const char*> names, const char* what) -> std::optional<int> {
    for (const char* name : names) {
      if (auto v = lookup(env, name)) return parse_int(*v, name);
    }
    (void)what;
    return std::nullopt;
  };
  w.rank = first({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}, "rank").value_or(0);
  w.size = first({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"}, "size").value_or(1);
  w.local_rank =
      first({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"}, "local").value_or(0);
  w.local_size = first({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE", "LOCAL_WORLD_SIZE"},
                       "local size")
                     .value_or(w.local_rank + 1);
  if (w.local_size <= w.local_rank) w.local_size = w.local_rank + 1;
  if (w.size < 1 || w.rank < 0 || w.rank >= w.size || w.local_rank < 0) {
    throw std::invalid_argument("inconsistent launcher environment: rank " + std::to_string(w.rank) +
                                " of world size " + std::to_string(w.size) + ", local rank " +
                                std::to_string(w.local_rank));
  }
  return w;
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace hangbench::ddp
