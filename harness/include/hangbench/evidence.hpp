// Evidence of a hang read from live processes: /proc, sockets, descriptor holders,
// debugger stacks. Used by the executor (before it kills a hung trial) and by
// `hangbench diagnose`. Owned by harness/src/diagnose.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/hang_capture.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// A process a trial's phase lines came from: a rank, wherever its launcher started it.
struct PhaseWriter {
  int pid = 0;
  int rank = -1;
  std::string host;  // "" when the line did not say (then: this host)
};

struct CaptureOptions {
  bool stacks = false;        // attach gdb/cuda-gdb in batch mode (pauses the process briefly)
  DebuggerOptions debugger;   // as diagnose takes them (hangbench/snapshot.hpp)
  nlohmann::json provenance;  // the run's; written as evidence.json's "provenance" when not null
  // The ranks of a launcher cell (srun, mpirun) are not in the launcher's tree or
  // cgroup: they are found by the trial's tag in their environment, and by the pid
  // and host of their phase lines. Ranks on other hosts are read through the Slurm
  // step they run in (as `diagnose --slurm-job` does).
  std::string trial_env_entry;  // "HANGBENCH_TRIAL_ID=..."; "" = no environment scan
  std::vector<PhaseWriter> phase_writers;
  std::string self_exe;  // this hangbench, for srun on the other hosts; "" = /proc/self/exe
};

// The trial's processes on this host: `pids` (its tree or cgroup), every process
// whose environment carries `trial_env_entry`, the phase writers on this host
// whose environment carries it too (a pid may have been reused), and all their descendants.
std::vector<int> trial_processes_on_this_host(const std::vector<int>& pids, const CaptureOptions& opts,
                                              const std::string& proc_root = "/proc");

struct CaptureResult {
  std::string summary;             // one paragraph in words, e.g. the holder sentence
  nlohmann::json json;             // the whole snapshot, schema in docs/evidence.md
  std::vector<std::string> files;  // what was written under the folder
};

// Reads everything about `pids` (and the holders of their connections, inside or
// outside that set) and writes evidence.json and evidence.txt under `dir`.
CaptureResult capture_to_dir(const std::vector<int>& pids, const std::string& dir, const CaptureOptions& opts);

// capture_to_dir behind the executor's interface (hangbench/hang_capture.hpp): what
// `run` and `validate` give their ProcessExecutor.
std::shared_ptr<const HangCapture> make_hang_capture();

}  // namespace hangbench::diagnose
