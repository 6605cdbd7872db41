// The exit-code contract of every workload, hangbench::workload_exit (the CLI's own
// table is hangbench::exit_code, harness/include/hangbench/exit_codes.hpp). The
// harness counts any non-zero exit as a failed trial (exec/process_executor.cpp);
// the values below let a reader of a trial's exit_code tell why without its stderr.
#pragma once

namespace hangbench::workload_exit {

inline constexpr int kHealthy = 0;         // the run finished and every check held
inline constexpr int kWrongResult = 1;     // a correctness check failed (e.g. an all-reduce sum)
inline constexpr int kUsage = 2;           // bad arguments or a configuration the run cannot use
inline constexpr int kInfrastructure = 3;  // the machine lacks what the run needs: no GPU, library
                                           // not loadable, MPI/CUDA/Python init failed
inline constexpr int kRunError = 4;        // an error during the run itself (NCCL, CUDA, sockets)
inline constexpr int kHangDetected = 5;    // the workload's own watchdog saw it hang and aborted

// One line for --help and the READMEs.
inline constexpr const char* kSummary =
    "Exit codes: 0 healthy, 1 wrong result, 2 usage, 3 infrastructure, 4 run error, "
    "5 hang detected by the workload itself.";

}  // namespace hangbench::workload_exit
