// Launcher plumbing: the processes that start, watch and relay for a job's ranks
// (hangbench's own harness and watcher, srun and slurmstepd, torchrun's agent,
// mpirun and its daemons). Their waits are how they work, never a hang of the job.
#pragma once

#include <string>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// "hangbench's trial watcher", "srun", "torchrun's agent", ...; "" for a job's own process.
std::string plumbing_role(const ProcessSnapshot& p);
inline bool is_plumbing(const ProcessSnapshot& p) { return !plumbing_role(p).empty(); }

}  // namespace hangbench::diagnose
