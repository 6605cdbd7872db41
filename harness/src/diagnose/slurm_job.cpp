// The job side of `diagnose --slurm-job`: which nodes the job runs on (squeue),
// one `hangbench diagnose --slurm-node` per node through `srun --overlap
// --jobid` (a step beside the hung one, sharing its CPUs), the nodes' reports
// put together, and the cross-rank findings. Slurm places; hangbench reads.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "hangbench/slurm_diagnose.hpp"
#include "nccl/process.hpp"

namespace hangbench::diagnose::slurm {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string first_line(const std::string& text) {
  auto lines = lines_of(text);
  return lines.empty() ? "" : lines.front();
}

// squeue's most telling line: its fatal or last error, else its first line.
std::string telling_line(const std::string& output) {
  std::string best;
  for (const auto& line : lines_of(output))
    if (line.find("fatal") != std::string::npos || best.empty() || line.find("error") != std::string::npos) best = line;
  return best.empty() ? "no output" : best;
}

}  // namespace

std::string slurm_unreachable_sentence(const std::string& tool_said) {
  const char* env = std::getenv("SLURM_CONF");
  std::string conf = env && *env ? env : "/etc/slurm/slurm.conf";
  std::string controller;
  std::ifstream in(conf);
  for (std::string line; std::getline(in, line);) {
    for (const char* key : {"SlurmctldHost=", "ControlMachine="})
      if (line.rfind(key, 0) == 0 && controller.empty()) controller = line.substr(std::string(key).size());
  }
  std::string where =
      env && *env ? fmt::format("SLURM_CONF={}", conf) : fmt::format("SLURM_CONF is unset, so Slurm reads {}", conf);
  std::string ctld = controller.empty()
                         ? fmt::format("which names no controller{}", in.is_open() ? "" : " (it cannot be read)")
                         : fmt::format("whose controller is {}", controller);
  return fmt::format(
      "the Slurm controller cannot be reached ({}, {}): set SLURM_CONF to the cluster's slurm.conf and check "
      "that slurmctld answers (`scontrol ping`); Slurm said: {}",
      where, ctld, tool_said);
}

bool valid_job_id(const std::string& id) {
  if (id.empty() || id.size() > 32) return false;
  for (char c : id) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return std::isdigit(static_cast<unsigned char>(id.front())) && std::isdigit(static_cast<unsigned char>(id.back()));
}

JobDiagnosis diagnose_job(const JobRequest& request) {
  JobDiagnosis d;
  d.job_id = request.job_id;
  d.step = request.step;
  auto fail = [&](int code, std::string error) {
    d.exit_code = code;
    d.error = std::move(error);
    return d;
  };
  if (!valid_job_id(request.job_id))
    return fail(2, "--slurm-job wants a job id like 1234 or 1234_5, got '" + request.job_id + "'");
  if (!request.step.empty() && !valid_job_id(request.step))
    return fail(2, "--step wants a step number, got '" + request.step + "'");

  nccl::ProcessResult nodelist;
  try {
    nodelist = nccl::run_process({"squeue", "-h", "-j", request.job_id, "-t", "RUNNING", "-o", "%N"});
  } catch (const std::exception& e) {
    return fail(3, std::string("cannot run squeue (is this a Slurm login or compute node?): ") + e.what());
  }
  if (nodelist.exit_status != 0) {
    // A job Slurm does not know is the caller's mistake; anything else is Slurm out of reach.
    if (nodelist.output.find("Invalid job id") != std::string::npos)
      return fail(2, "squeue -j " + request.job_id + ": " + first_line(nodelist.output));
    return fail(3, slurm_unreachable_sentence(telling_line(nodelist.output)));
  }
  std::string compressed = first_line(nodelist.output);
  if (compressed.empty()) return fail(2, "job " + request.job_id + " is not running (squeue shows no nodes for it)");
  auto hostnames = nccl::run_process({"scontrol", "show", "hostnames", compressed});
  auto hosts = lines_of(hostnames.output);
  if (hostnames.exit_status != 0 || hosts.empty()) {
    return fail(3, "scontrol show hostnames " + compressed + ": " + first_line(hostnames.output));
  }

  // Bounded: every node's debuggers run at once, each bounded by the debugger
  // timeout; a minute more for srun to start the step and read /proc.
  double bound = (request.stacks ? request.debugger.timeout_s : 0) + 60;
  std::vector<std::string> argv = {"timeout", "--kill-after=5", fmt::format("{:.0f}", bound), "srun", "--overlap",
                                   "--jobid=" + request.job_id, "--nodes=" + std::to_string(hosts.size()),
                                   // Given, not left to the job's SLURM_NTASKS (srun reads it inside
                                   // an allocation): two tasks on a node would interleave two reports.
                                   "--ntasks=" + std::to_string(hosts.size()), "--ntasks-per-node=1",
                                   "--nodelist=" + compressed, "--label", "--quiet", request.self_exe, "diagnose",
                                   "--slurm-node", request.job_id};
  if (!request.step.empty()) argv.insert(argv.end(), {"--step", request.step});
  if (request.stacks) {
    argv.insert(argv.end(), {"--stacks", "--timeout", fmt::format("{:g}", request.debugger.timeout_s)});
    if (!request.debugger.program.empty()) argv.insert(argv.end(), {"--debugger", request.debugger.program});
    if (request.debugger.everywhere) argv.push_back("--debugger-everywhere");
    if (request.debugger.flight_recorder_wait_s >= 0)
      argv.insert(argv.end(), {"--fr-wait", fmt::format("{:g}", request.debugger.flight_recorder_wait_s)});
    for (const auto& library : request.debugger.symbols) argv.insert(argv.end(), {"--symbols", library});
  }
  nccl::ProcessResult srun;
  try {
    srun = nccl::run_process(argv);
  } catch (const std::exception& e) {
    return fail(3, std::string("cannot run srun: ") + e.what());
  }
  d.nodes = decode_nodes(srun.output);
  for (const auto& host : hosts) {
    bool seen = false;
    for (const auto& n : d.nodes) seen = seen || n.host == host || n.host.rfind(host + ".", 0) == 0;
    if (!seen) {
      NodeDiagnosis missing;
      missing.host = host;
      missing.error = fmt::format("no report from this node (srun exit {}: {})", srun.exit_status,
                                  first_line(srun.output).empty() ? "no output" : first_line(srun.output));
      d.nodes.push_back(std::move(missing));
    }
  }
  bool any_read = false;
  for (const auto& n : d.nodes) any_read = any_read || n.error.empty();
  if (!any_read) {
    std::string why;
    for (const auto& n : d.nodes) why += (why.empty() ? "" : "; ") + n.host + ": " + n.error;
    return fail(3, "no node of job " + request.job_id + " could be read: " + why);
  }
  d.cross_rank = cross_rank_findings(d.nodes);
  return d;
}

}  // namespace hangbench::diagnose::slurm
