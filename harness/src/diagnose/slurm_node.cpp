// The node side of `diagnose --slurm-job`: the job's processes are those whose
// environment carries its SLURM_JOB_ID (slurmstepd starts every task with it),
// which works with any proctrack plugin and for the children a rank forks.
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "hangbench/clock.hpp"
#include "hangbench/proc.hpp"
#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::diagnose::slurm {
namespace {

std::map<std::string, std::string> read_environment(const std::string& proc_root, int pid) {
  std::map<std::string, std::string> env;
  auto text = proc::read_text(proc_root + "/" + std::to_string(pid) + "/environ");
  if (!text) return env;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    std::string entry = text->substr(start, end - start);
    if (auto eq = entry.find('='); eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    start = end + 1;
  }
  return env;
}

int rank_of(const std::map<std::string, std::string>& env) {
  for (const char* name : {"SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
    if (auto it = env.find(name); it != env.end()) return std::atoi(it->second.c_str());
  }
  return -1;
}

std::string value_or_empty(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace

std::vector<JobProcess> find_job_processes(const std::string& proc_root, const std::string& job_id,
                                           const std::string& step) {
  // The diagnose step runs inside the job too: leave its processes out.
  const char* own_job = std::getenv("SLURM_JOB_ID");
  const char* own_step = std::getenv("SLURM_STEP_ID");
  bool inside_job = own_job && job_id == own_job && own_step;
  std::vector<JobProcess> out;
  for (int pid : proc::list_pids(proc_root)) {
    if (pid == ::getpid()) continue;
    auto env = read_environment(proc_root, pid);
    std::string job = value_or_empty(env, "SLURM_JOB_ID");
    if (job.empty()) job = value_or_empty(env, "SLURM_JOBID");
    if (job != job_id) continue;
    std::string process_step = value_or_empty(env, "SLURM_STEP_ID");
    if (inside_job && process_step == own_step) continue;
    if (!step.empty() && process_step != step) continue;
    JobProcess p;
    p.pid = pid;
    p.rank = process_step.empty() ? -1 : rank_of(env);  // the batch script's SLURM_PROCID=0 is no rank
    p.step = process_step;
    if (auto info = proc::read_process(proc_root, pid)) p.comm = info->comm;
    out.push_back(p);
  }
  return out;
}

NodeDiagnosis diagnose_node(const JobRequest& request) {
  NodeDiagnosis node;
  node.host = host_name();
  node.processes = find_job_processes(request.proc_root, request.job_id, request.step);
  if (node.processes.empty()) {
    node.error = "no process of job " + request.job_id + (request.step.empty() ? "" : " step " + request.step) +
                 " on " + node.host;
    return node;
  }
  // take_snapshot, not diagnose(): a process of the job that ends meanwhile is a
  // note, not a failed node.
  std::vector<int> pids;
  for (const auto& p : node.processes) pids.push_back(p.pid);
  diagnose::SnapshotOptions options;
  options.proc_root = request.proc_root;
  options.stacks = request.stacks;
  options.debugger = request.debugger;
  node.snapshot = diagnose::take_snapshot(pids, options);
  node.findings = diagnose::find_hang_shapes(node.snapshot);
  return node;
}

}  // namespace hangbench::diagnose::slurm
