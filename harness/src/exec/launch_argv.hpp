// The command line of a trial: the workload itself, or wrapped by its launcher.
#pragma once

#include <string>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench::exec_detail {

// mpirun -np R [args] [-x VAR...] CMD; srun -n R [args] CMD (srun exports the whole
// environment by default); torchrun --standalone --nproc-per-node R --no-python
// [args] CMD (the cell's command is run as it is, a C++ program or `python3 x.py`).
// `forwarded_vars` are the variables the harness sets for the trial.
std::vector<std::string> launch_argv(const Cell& cell, const std::vector<std::string>& workload_argv,
                                     const std::vector<std::string>& forwarded_vars);

}  // namespace hangbench::exec_detail
