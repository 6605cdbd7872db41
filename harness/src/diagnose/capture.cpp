// capture_to_dir(): the executor's entry point, before it kills a hung trial.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "hangbench/clock.hpp"
#include "hangbench/diagnose.hpp"
#include "hangbench/evidence.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/render.hpp"
#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::diagnose {

namespace {

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// The Slurm job and step the trial's ranks run in, from the environment of its
// processes here (srun inherits SLURM_JOB_ID from the allocation; a rank has its step).
std::pair<std::string, std::string> slurm_job_of(const Snapshot& s) {
  std::string job, step;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    auto env = read_environment("/proc", p.info.pid);
    if (auto it = env.find("SLURM_JOB_ID"); it != env.end() && job.empty()) job = it->second;
    if (auto it = env.find("SLURM_STEP_ID"); it != env.end() && step.empty() && p.rank >= 0) step = it->second;
  }
  return {job, step};
}

// Ranks on other hosts: the Slurm step's snapshot on every node, as `diagnose --slurm-job`.
std::string remote_ranks(const Snapshot& s, const CaptureOptions& opts, const std::filesystem::path& folder,
                         CaptureResult& result) {
  std::set<std::string> elsewhere;
  const std::string host = host_name();
  for (const auto& w : opts.phase_writers)
    if (!w.host.empty() && w.host != host) elsewhere.insert(w.host);
  if (elsewhere.empty()) return "";
  auto [job, step] = slurm_job_of(s);
  if (job.empty())
    return fmt::format(" Ranks ran on {} other host(s) ({}), outside any Slurm job this host can see: not read.",
                       elsewhere.size(), *elsewhere.begin());
  slurm::JobRequest request;
  request.job_id = job;
  request.step = step;
  request.stacks = opts.stacks;
  request.debugger = opts.debugger;
  std::error_code ec;
  request.self_exe =
      opts.self_exe.empty() ? std::filesystem::read_symlink("/proc/self/exe", ec).string() : opts.self_exe;
  auto d = slurm::diagnose_job(request);
  if (d.exit_code != 0) return fmt::format(" The ranks on other hosts could not be read: {}.", d.error);
  if (write_file(folder / "slurm-job.json", slurm::job_json(d).dump(2) + "\n"))
    result.files.push_back("slurm-job.json");
  if (write_file(folder / "slurm-job.txt", slurm::render_job_text(d))) result.files.push_back("slurm-job.txt");
  std::string across;
  for (const auto& f : d.cross_rank) across += " " + f.summary;
  return across.empty() ? " No rank on the other hosts is in a known hang shape (slurm-job.txt)." : across;
}

}  // namespace

CaptureResult capture_to_dir(const std::vector<int>& pids, const std::string& dir, const CaptureOptions& opts) {
  SnapshotOptions snapshot_options;
  snapshot_options.stacks = opts.stacks;
  snapshot_options.debugger = opts.debugger;
  Snapshot snapshot = take_snapshot(trial_processes_on_this_host(pids, opts), snapshot_options);
  auto findings = find_hang_shapes(snapshot);

  CaptureResult result;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path folder(dir);
  result.summary = summary_paragraph(snapshot, findings) + remote_ranks(snapshot, opts, folder, result);
  result.json = diagnosis_json(snapshot, findings);
  if (!opts.provenance.is_null()) result.json["provenance"] = opts.provenance;
  if (write_file(folder / "evidence.json", result.json.dump(2) + "\n")) result.files.push_back("evidence.json");
  if (write_file(folder / "evidence.txt", render_text(snapshot, findings))) result.files.push_back("evidence.txt");
  for (const auto& p : snapshot.processes) {
    if (p.stacks.raw.empty()) continue;
    std::string name = "stacks-" + std::to_string(p.info.pid) + ".txt";
    if (write_file(folder / name, p.stacks.raw)) result.files.push_back(name);
  }
  return result;
}

}  // namespace hangbench::diagnose
