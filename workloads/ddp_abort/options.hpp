// Command line and launcher environment of ddp_abort; no torch in here, so the
// parsing is unit-tested on machines without libtorch.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "placement.hpp"

namespace hangbench::ddp {

enum class Backend { Direct, C10d };
enum class Teardown { Watchdog, Exit, Destroy };
enum class WorkerGate { After, Before, None, Spawn };
enum class PoolPolicy { Persistent, PerEpoch };
// How the watchdog's collective is kept from completing. gate: a host function holds the
// stream (every rank); missing-rank: the last rank never posts it, so the others' kernels
// wait for a peer that does not come, as when one rank is stuck elsewhere. auto: gate at
// world size 1 (no peer to miss), missing-rank above.
enum class Stall { Auto, Gate, MissingRank };

std::string to_string(Backend b);
std::string to_string(Teardown t);
std::string to_string(WorkerGate g);
std::string to_string(PoolPolicy p);
std::string to_string(Stall s);
// The stall a watchdog teardown uses at this world size (resolves Stall::Auto).
Stall resolve_stall(Stall requested, int world_size);

struct Options {
  Backend backend = Backend::Direct;
  std::string nccl_lib;  // direct: required; c10d: the library LD_PRELOAD must have put in place
  Teardown teardown = Teardown::Exit;
  WorkerGate workers = WorkerGate::After;
  PoolPolicy pool = PoolPolicy::Persistent;
  Stall stall = Stall::Auto;
  int num_workers = 2;
  // Ranks that start loader workers; empty: every rank. One rank alone asks whether
  // its hung abort holds up the ranks that have no workers.
  std::set<int> worker_ranks;
  int epochs = 2;
  int steps_per_epoch = 4;
  int batch_size = 32;
  int hidden = 256;
  double collective_timeout_s = 1.0;  // watchdog deadline of the stalled collective
  double linger_s = 0.2;              // pause between the last step and the teardown
  std::string rendezvous_dir;         // default: $HANGBENCH_TRIAL_DIR
  // gpu-per-rank: cuda:LOCAL_RANK; shared-gpu: every rank on cuda:0, each its own NCCL host.
  workload::Placement placement = workload::Placement::GpuPerRank;
};

// Rank layout from the launcher (mpirun, srun, torchrun); 1 process alone.
struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;  // ranks on this node; 1 when the launcher does not say
};

struct ParseOutcome {
  std::optional<Options> options;  // set on success
  int exit_code = 0;               // 0 with options; 0 for --help; 2 for usage errors
  std::string message;             // help text or the error, for stderr/stdout
};

// Whether `rank` starts loader workers under options.worker_ranks.
bool rank_starts_workers(const Options& options, int rank);

// args excludes argv[0]. `env` supplies defaults (HANGBENCH_TRIAL_DIR).
ParseOutcome parse_options(const std::vector<std::string>& args, const std::map<std::string, std::string>& env);

// Reads OMPI_COMM_WORLD_*, PMI_*, SLURM_*, RANK/WORLD_SIZE/LOCAL_RANK.
// Throws std::invalid_argument when they are inconsistent (rank >= size).
World world_from_env(const std::map<std::string, std::string>& env);

std::map<std::string, std::string> current_environment();

}  // namespace hangbench::ddp
