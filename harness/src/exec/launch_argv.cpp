#include "exec/launch_argv.hpp"

namespace hangbench::exec_detail {

std::vector<std::string> launch_argv(const Cell& cell, const std::vector<std::string>& workload_argv,
                                     const std::vector<std::string>& forwarded_vars) {
  std::vector<std::string> argv;
  const auto& extra = cell.launcher.extra_args;
  switch (cell.launcher.kind) {
    case LauncherKind::Process:
      return workload_argv;
    case LauncherKind::Mpirun:
      argv = {"mpirun", "-np", std::to_string(cell.launcher.ranks)};
      argv.insert(argv.end(), extra.begin(), extra.end());
      for (const auto& var : forwarded_vars) {
        argv.push_back("-x");
        argv.push_back(var);
      }
      break;
    case LauncherKind::Srun:
      argv = {"srun", "-n", std::to_string(cell.launcher.ranks)};
      argv.insert(argv.end(), extra.begin(), extra.end());
      break;
    case LauncherKind::Torchrun:
      // torchrun sets RANK, LOCAL_RANK and WORLD_SIZE for each worker, which the
      // phase lines carry; without --no-python it would prepend `python`.
      argv = {"torchrun", "--standalone", "--nproc-per-node", std::to_string(cell.launcher.ranks), "--no-python"};
      argv.insert(argv.end(), extra.begin(), extra.end());
      break;
  }
  argv.insert(argv.end(), workload_argv.begin(), workload_argv.end());
  return argv;
}

}  // namespace hangbench::exec_detail
