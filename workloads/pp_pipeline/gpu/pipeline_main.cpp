// pp_pipeline: the pipeline-parallel deadlock of TensorRT-LLM PR #20030 on
// real GPUs. One MPI rank per stage; each executes its stage plan
// (src/stage_plan.hpp) in pipeline_run.cpp. See README.md for the cycle and
// the axes. main only parses the options, starts MPI and turns an error into
// the exit code every rank leaves with.
#include <mpi.h>

#include <exception>
#include <iostream>
#include <string>
#include <variant>
#include <vector>

#include "fatal_error.hpp"
#include "hang_watcher.hpp"
#include "phase.hpp"
#include "pipeline_options.hpp"
#include "pipeline_run.hpp"
#include "stage_log.hpp"
#include "workload_exit_codes.hpp"

int main(int argc, char** argv) {
  using namespace pp;
  using namespace pp::gpu;
  // Before any thread exists: MPI, CUDA and Python threads inherit the mask,
  // so the watched signals reach only the hang watcher.
  HangWatcher::block_watched_signals();
  auto parsed = parse_pipeline_options(std::vector<std::string>(argv + 1, argv + argc));
  if (auto* help = std::get_if<HelpRequested>(&parsed)) {
    std::cout << help->text;
    return hangbench::workload_exit::kHealthy;
  }
  if (auto* error = std::get_if<UsageError>(&parsed)) {
    std::cerr << error->message << "\n";  // "pp_pipeline: reason (see --help)"
    return kExitUsage;
  }
  // start and mpi_ready split a trial's start-up (launcher, MPI, then CUDA, NCCL
  // and Python up to init_done) for its timing.
  hangbench::phase::mark("start");
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::cerr << "pp_pipeline: MPI_Init_thread failed\n";
    return kExitInfra;
  }
  hangbench::phase::mark("mpi_ready");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    log_line(rank, size, "error: a pipeline needs at least 2 ranks (mpirun -np N, N >= 2)");
    MPI_Finalize();
    return kExitUsage;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  // A rank that fails must take every rank with it (MPI_Abort), or they hang.
  try {
    return run_pipeline(std::get<PipelineOptions>(parsed), comm);
  } catch (const FatalError& e) {
    log_line(rank, size, "error: " + e.message);
    hangbench::phase::metric("error", e.message);
    MPI_Abort(MPI_COMM_WORLD, e.exit_code);
    return e.exit_code;
  } catch (const std::exception& e) {
    log_line(rank, size, std::string("error: ") + e.what());
    hangbench::phase::metric("error", e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitInfra);
    return kExitInfra;
  }
}
