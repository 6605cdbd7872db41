// `hangbench diagnose`: which processes to read, the diagnosis (a snapshot and its
// findings, from the explain layer), and the command as a whole: what it reads,
// how it judges (hangbench/findings.hpp) and what it writes (hangbench/render.hpp).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "hangbench/findings.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// `hangbench diagnose`: which processes to read, and the checks before reading.
struct DiagnoseRequest {
  std::vector<int> pids;  // as given
  int tree_root = 0;      // --tree PID: it and all its descendants
  bool stacks = false;
  DebuggerOptions debugger;
  std::string proc_root = "/proc";
};

struct Diagnosis {
  int exit_code = 0;  // 0 report produced, 2 bad pid / not inspectable
  std::string error;  // when exit_code != 0, in words
  Snapshot snapshot;
  std::vector<Finding> findings;
};

// The pids to read, or an error naming the first pid that does not exist or
// cannot be inspected.
struct ResolvedTargets {
  std::vector<int> pids;
  std::string error;
};
ResolvedTargets resolve_targets(const DiagnoseRequest& request);
Diagnosis diagnose(const DiagnoseRequest& request);

// `hangbench diagnose` as its options give it (docs/diagnose.md): live processes
// (request), stored evidence judged again (from), or every node of a Slurm job.
struct CommandOptions {
  DiagnoseRequest request;    // pids, --tree, --stacks and the debugger's options
  std::string from;           // re-judge stored evidence instead of live processes
  bool json = false;          // JSON with the host's provenance instead of text
  std::string markdown_path;  // "" none
  std::string dot_path;       // the wait-for graph, for Graphviz; "" none
  std::string slurm_job;      // every node of a running Slurm job
  std::string slurm_node;     // hidden: this node's part of --slurm-job, as framed lines
  std::string step;           // with slurm_job: only this step
  bool timings = false;       // where the time went, stage by stage, on stderr
};
// Reads, judges and writes the report on `out` (the files it names too). A
// diagnosis that cannot be made throws UsageError (exit 2) or InfraError (exit 3).
int run_command(const CommandOptions& options, std::ostream& out);

}  // namespace hangbench::diagnose
