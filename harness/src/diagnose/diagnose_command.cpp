// `hangbench diagnose` as a whole, below the CLI (which only parses its options):
// live processes, stored evidence judged again, or every node of a Slurm job;
// the report written as asked, and where the time went (--timings).
#include <filesystem>

#include "diagnose/diagnose_report.hpp"
#include "diagnose/stage_timer.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/diagnose.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/exit_codes.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::diagnose {

namespace {

// The NCCL libraries the diagnosed processes have mapped: hashed into the provenance
// (the attribution names them by hash; the snapshot already hashed them). Every other
// mapped library is listed by path in its process's `libraries`, not hashed: a PyTorch
// process maps gigabytes of CUDA and torch libraries, seconds of SHA-256.
// Stored evidence (--from) names another machine's files, so none are hashed then.
std::vector<std::string> live_nccl_libraries(const CommandOptions& options, const Snapshot& snapshot) {
  if (!options.from.empty()) return {};
  return nccl_libraries_mapped(snapshot);
}

slurm::JobRequest slurm_request(const CommandOptions& options, const std::string& job) {
  slurm::JobRequest r;
  r.job_id = job;
  r.step = options.step;
  r.stacks = options.request.stacks;
  r.debugger = options.request.debugger;
  std::error_code ec;
  r.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return r;
}

// A diagnosis that could not be made (its exit_code says whose fault: 2 bad input,
// 3 Slurm or srun) thrown as the error the CLI's guarded() turns back into that code.
[[noreturn]] void throw_diagnosis_error(int code, const std::string& error) {
  if (code == exit_code::kUsage) throw UsageError(error);
  throw InfraError(error);
}

// --slurm-job: the merged report of every node; --slurm-node: one node's part.
int run_slurm(const CommandOptions& options, std::ostream& out) {
  if (!options.slurm_node.empty()) {
    out << slurm::encode_node(slurm::diagnose_node(slurm_request(options, options.slurm_node))) << std::flush;
    return exit_code::kOk;
  }
  auto d = slurm::diagnose_job(slurm_request(options, options.slurm_job));
  if (d.exit_code != exit_code::kOk) throw_diagnosis_error(d.exit_code, d.error);
  if (options.json)
    out << slurm::job_json(d).dump(2) << "\n";
  else
    out << slurm::render_job_text(d);
  if (!options.markdown_path.empty()) {
    write_file_atomically(options.markdown_path, "```\n" + slurm::render_job_text(d) + "```\n");
  }
  return exit_code::kOk;
}

// Writes the diagnosis as asked (text or JSON on `out`, Markdown and Graphviz to files).
int report(const CommandOptions& options, std::ostream& out, const Snapshot& snapshot,
           const std::vector<Finding>& findings, const std::string& text_header, StageTimer& timer) {
  ReportOptions report_options;
  report_options.json = options.json;
  report_options.text_header = text_header;
  report_options.nccl_libraries = live_nccl_libraries(options, snapshot);
  report_options.markdown_path = options.markdown_path;
  report_options.dot_path = options.dot_path;
  write_report(out, snapshot, findings, report_options, timer);
  return exit_code::kOk;
}

int rejudge(const CommandOptions& options, std::ostream& out) {
  StageTimer timer(options.timings);
  const Snapshot snapshot = read_snapshot_file(options.from);  // bad file: std::invalid_argument
  timer.mark("read file");
  auto findings = find_hang_shapes(snapshot);
  timer.mark("rules");
  return report(options, out, snapshot, findings,
                "(stored evidence " + options.from + ", judged again by this hangbench's rules)\n", timer);
}

}  // namespace

int run_command(const CommandOptions& options, std::ostream& out) {
  if (!options.from.empty()) return rejudge(options, out);
  if (!options.slurm_job.empty() || !options.slurm_node.empty()) return run_slurm(options, out);
  if (!options.step.empty()) throw UsageError("--step needs --slurm-job");
  StageTimer timer(options.timings);
  if (options.json) prefetch_host_provenance();  // the GPU facts while the processes are read
  auto diagnosis = diagnose(options.request);
  if (diagnosis.exit_code != exit_code::kOk) throw_diagnosis_error(diagnosis.exit_code, diagnosis.error);
  timer.print("reads", diagnosis.snapshot.read_seconds);
  timer.mark("read+rules");
  return report(options, out, diagnosis.snapshot, diagnosis.findings, "", timer);
}

}  // namespace hangbench::diagnose
