// `hangbench diagnose --slurm-job JOBID [--step S]`: a snapshot on every node of a
// running Slurm job (through `srun --overlap --jobid`), merged into one report:
// each rank, its host, where it waits, and who holds what it waits on.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/diagnose.hpp"

namespace hangbench::diagnose::slurm {

// A process of the job on one node, as its environment names it.
struct JobProcess {
  int pid = 0;
  int rank = -1;     // SLURM_PROCID (or RANK / OMPI_COMM_WORLD_RANK / PMI_RANK); -1 when unset
  std::string step;  // SLURM_STEP_ID; "" for the batch script
  std::string comm;
};

// One node's part: run there by the hidden `diagnose --slurm-node`.
struct NodeDiagnosis {
  std::string host;
  std::vector<JobProcess> processes;
  diagnose::Snapshot snapshot;
  std::vector<diagnose::Finding> findings;
  std::string error;  // the node could not be read, in words
};

struct JobRequest {
  std::string job_id;  // digits, or array job "123_4"
  std::string step;    // "" = every step of the job
  bool stacks = false;
  diagnose::DebuggerOptions debugger;  // passed to every node's diagnose as is
  std::string self_exe;                // this hangbench, at the same path on every node
  std::string proc_root = "/proc";
};

struct JobDiagnosis {
  int exit_code = 0;  // 0 report, 2 no such running job or bad id, 3 Slurm unreachable or srun failed
  std::string error;
  std::string job_id, step;
  std::vector<NodeDiagnosis> nodes;
  std::vector<diagnose::Finding> cross_rank;  // rule "slurm-cross-rank": who is hung, who waits on it
};

// ---- node side --------------------------------------------------------------
// The job's processes on this machine (by SLURM_JOB_ID in their environment),
// minus the diagnose step itself; only step `step` when it is not "".
std::vector<JobProcess> find_job_processes(const std::string& proc_root, const std::string& job_id,
                                           const std::string& step);
NodeDiagnosis diagnose_node(const JobRequest& request);
// The node's diagnosis as short self-describing lines ("hangbench-node HOST I/N
// CHUNK"): srun interleaves the nodes' output line by line, never within one.
std::string encode_node(const NodeDiagnosis& node);
nlohmann::json node_json(const NodeDiagnosis& node);

// ---- job side ---------------------------------------------------------------
bool valid_job_id(const std::string& id);
// Exit 3's sentence when Slurm cannot be reached: SLURM_CONF, the controller it
// names, and what the Slurm tool said.
std::string slurm_unreachable_sentence(const std::string& tool_said);
// The nodes' lines from srun's output, put together again (other lines ignored).
// A node whose lines are incomplete becomes a NodeDiagnosis with `error` set.
std::vector<NodeDiagnosis> decode_nodes(const std::string& srun_output);
// Which rank is in the hung teardown, who holds what it waits on, which ranks wait on it.
std::vector<diagnose::Finding> cross_rank_findings(const std::vector<NodeDiagnosis>& nodes);
JobDiagnosis diagnose_job(const JobRequest& request);

std::string render_job_text(const JobDiagnosis& d);
nlohmann::json job_json(const JobDiagnosis& d);

}  // namespace hangbench::diagnose::slurm
