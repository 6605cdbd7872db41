// plumbing_role(): by the kernel's command name, and for Python launchers (whose
// comm is "python3") by the module or script their command line runs.
#include "hangbench/plumbing.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace hangbench::diagnose {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The torchrun agent: `torchrun ...`, `python -m torch.distributed.run|launch ...`.
bool runs_torchrun(const std::vector<std::string>& cmdline) {
  for (std::size_t i = 0; i < cmdline.size() && i < 4; ++i) {
    const auto& a = cmdline[i];
    if (ends_with(a, "/torchrun") || a == "torchrun" || a == "torch.distributed.run" || a == "torch.distributed.launch")
      return true;
  }
  return false;
}

}  // namespace

std::string plumbing_role(const ProcessSnapshot& p) {
  static const std::vector<std::pair<std::string, std::string>> by_comm = {
      {"hangbench", "hangbench's harness"},
      {"hangbench-watch", "hangbench's trial watcher"},
      {"srun", "srun"},
      {"slurmstepd", "Slurm's step daemon"},
      {"slurmd", "Slurm's node daemon"},
      {"sbatch", "sbatch"},
      {"salloc", "salloc"},
      {"mpirun", "mpirun"},
      {"mpiexec", "mpiexec"},
      {"orterun", "Open MPI's launcher"},
      {"orted", "Open MPI's daemon"},
      {"prterun", "PRRTE's launcher"},
      {"prted", "PRRTE's daemon"},
      {"prte", "PRRTE's launcher"},
      {"hydra_pmi_proxy", "MPICH hydra's proxy"},
      {"mpiexec.hydra", "MPICH hydra's launcher"},
      {"torchrun", "torchrun's agent"},
  };
  for (const auto& [comm, role] : by_comm)
    if (p.info.comm == comm) return role;
  if (runs_torchrun(p.info.cmdline)) return "torchrun's agent";
  return "";
}

}  // namespace hangbench::diagnose
