// `hangbench diagnose PID... | --tree PID | --from EVIDENCE.json [--stacks] [--timeout S] [--json] [--markdown FILE]`
// The evidence of a hang in any live process: read-only unless --stacks.
#include "hangbench/diagnose.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/model.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::cli {

namespace {

// --timeout bounds the stacks of all the processes together: seconds, above 0 and at most an hour.
constexpr double kMaxDiagnoseTimeout = 3600;

struct DiagnoseArgs {
  std::vector<int> pids;
  int tree_root = 0;
  bool stacks = false;
  double timeout_s = 20;
  std::string debugger;
  bool debugger_everywhere = false;
  std::vector<std::string> symbols;
  std::string from;  // re-judge stored evidence instead of live processes
  bool json = false;
  std::string markdown_path;
  std::string dot_path;    // the wait-for graph, for Graphviz
  std::string slurm_job;   // every node of a running Slurm job
  std::string slurm_node;  // hidden: this node's part of --slurm-job, as framed lines
  std::string step;
  bool timings = false;
};

// The NCCL libraries the diagnosed processes have mapped: hashed into the provenance
// (the attribution names them by hash; the snapshot already hashed them). Every other
// mapped library is listed by path in its process's `libraries`, not hashed: a PyTorch
// process maps gigabytes of CUDA and torch libraries, seconds of SHA-256.
// Stored evidence (--from) names another machine's files, so none are hashed then.
std::vector<std::string> live_nccl_libraries(const DiagnoseArgs& args, const diagnose::Snapshot& snapshot) {
  if (!args.from.empty()) return {};
  return diagnose::nccl_libraries_mapped(snapshot);
}

// --timings: where the command's wall time went, on stderr (docs/diagnose.md).
diagnose::DebuggerOptions debugger_options(const DiagnoseArgs& args) {
  diagnose::DebuggerOptions d;
  d.timeout_s = args.timeout_s;
  d.program = args.debugger;
  d.everywhere = args.debugger_everywhere;
  d.symbols = args.symbols;
  return d;
}

diagnose::slurm::JobRequest slurm_request(const DiagnoseArgs& args, const std::string& job) {
  diagnose::slurm::JobRequest r;
  r.job_id = job;
  r.step = args.step;
  r.stacks = args.stacks;
  r.debugger = debugger_options(args);
  std::error_code ec;
  r.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return r;
}

// A diagnosis that could not be made (its exit_code says whose fault: 2 bad input,
// 3 Slurm or srun) thrown as the error guarded() turns back into that code.
[[noreturn]] void throw_diagnosis_error(int code, const std::string& error) {
  if (code == exit_code::kUsage) throw UsageError(error);
  throw InfraError(error);
}

// --slurm-job: the merged report of every node; --slurm-node: one node's part.
int run_slurm(const DiagnoseArgs& args) {
  if (!args.slurm_node.empty()) {
    std::cout << diagnose::slurm::encode_node(diagnose::slurm::diagnose_node(slurm_request(args, args.slurm_node)))
              << std::flush;
    return exit_code::kOk;
  }
  auto d = diagnose::slurm::diagnose_job(slurm_request(args, args.slurm_job));
  if (d.exit_code != exit_code::kOk) throw_diagnosis_error(d.exit_code, d.error);
  if (args.json)
    std::cout << diagnose::slurm::job_json(d).dump(2) << "\n";
  else
    std::cout << diagnose::slurm::render_job_text(d);
  if (!args.markdown_path.empty()) {
    write_file_atomically(args.markdown_path, "```\n" + diagnose::slurm::render_job_text(d) + "```\n");
  }
  return exit_code::kOk;
}

// Prints the diagnosis as asked (text or JSON on stdout, Markdown to a file).
int report(const DiagnoseArgs& args, const diagnose::Snapshot& snapshot, const std::vector<diagnose::Finding>& findings,
           const std::string& text_header, diagnose::StageTimer& timer) {
  diagnose::ReportOptions options;
  options.json = args.json;
  options.text_header = text_header;
  options.nccl_libraries = live_nccl_libraries(args, snapshot);
  options.markdown_path = args.markdown_path;
  options.dot_path = args.dot_path;
  diagnose::write_report(std::cout, snapshot, findings, options, timer);
  return exit_code::kOk;
}

int rejudge(const DiagnoseArgs& args) {
  diagnose::StageTimer timer(args.timings);
  const diagnose::Snapshot snapshot = diagnose::read_snapshot_file(args.from);  // bad file: std::invalid_argument
  timer.mark("read file");
  auto findings = diagnose::find_hang_shapes(snapshot);
  timer.mark("rules");
  return report(args, snapshot, findings,
                "(stored evidence " + args.from + ", judged again by this hangbench's rules)\n", timer);
}

int run_diagnose(const DiagnoseArgs& args) {
  if (!args.from.empty()) return rejudge(args);
  if (!args.slurm_job.empty() || !args.slurm_node.empty()) return run_slurm(args);
  if (!args.step.empty()) throw UsageError("--step needs --slurm-job");
  diagnose::StageTimer timer(args.timings);
  if (args.json) prefetch_host_provenance();  // the GPU facts while the processes are read
  diagnose::DiagnoseRequest request;
  request.pids = args.pids;
  request.tree_root = args.tree_root;
  request.stacks = args.stacks;
  request.debugger = debugger_options(args);
  auto diagnosis = diagnose::diagnose(request);
  if (diagnosis.exit_code != exit_code::kOk) throw_diagnosis_error(diagnosis.exit_code, diagnosis.error);
  timer.print("reads", diagnosis.snapshot.read_seconds);
  timer.mark("read+rules");
  return report(args, diagnosis.snapshot, diagnosis.findings, "", timer);
}

}  // namespace

void add_diagnose_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<DiagnoseArgs>();
  auto* sub = app.add_subcommand(
      "diagnose", "Evidence of a hang in live processes: threads, sockets, who holds them, known hang shapes");
  sub->add_option("pids", args->pids, "process ids to read");
  sub->add_option("--tree", args->tree_root, "read this process and all its descendants");
  sub->add_flag("--stacks", args->stacks,
                "native stacks (libdw, in-process) and Python frames of every target (pauses each thread briefly)");
  sub->add_option("--timeout", args->timeout_s,
                  "bound on the stacks of all processes together, seconds (default 20, at most 3600)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double v = 0;
            try {
              size_t used = 0;
              v = std::stod(text, &used);
              if (used != text.size()) v = 0;
            } catch (const std::exception&) {
            }
            if (v > 0 && v <= kMaxDiagnoseTimeout) return "";  // NaN and infinity fail both
            return "'" + text + "' is not allowed: give a number of seconds above 0 and at most " +
                   std::to_string(static_cast<int>(kMaxDiagnoseTimeout)) + " (e.g. 20)";
          },
          ""));
  sub->add_option(
      "--debugger", args->debugger,
      "also a debugger: cuda-gdb (device state of the processes with a CUDA context) or gdb (every target)");
  sub->add_flag("--debugger-everywhere", args->debugger_everywhere,
                "hand every target to --debugger, even those without a CUDA context (the old path, for comparison)");
  sub->add_option("--symbols", args->symbols,
                  "only these shared libraries' symbols, e.g. libnccl,libc.so (faster attach to libtorch processes)")
      ->delimiter(',');
  sub->add_option(
      "--from", args->from,
      "judge stored evidence again (a trial's evidence.json or `diagnose --json` output) instead of live processes");
  sub->add_flag("--json", args->json, "print JSON instead of text");
  sub->add_option("--markdown", args->markdown_path, "also write a Markdown report, pasteable into an issue");
  sub->add_option(
      "--dot", args->dot_path,
      "also write the wait-for graph for Graphviz (`dot -Tsvg FILE`): who waits for whom, the stuck part in red");
  sub->add_option("--slurm-job", args->slurm_job,
                  "every node of this running Slurm job, through srun --overlap --jobid, merged into one report");
  sub->add_option("--step", args->step, "with --slurm-job: only this job step's processes");
  sub->add_flag("--timings", args->timings, "print where the time went (reads, rules, provenance, render) on stderr");
  sub->add_option("--slurm-node", args->slurm_node, "(internal) this node's part of --slurm-job")->group("");
  set_help(sub,
           {{{"hangbench diagnose 12345", "the evidence of one live process: threads, wait channels, sockets"},
             {"hangbench diagnose --tree 12345 --stacks", "a process and its children, with native and Python stacks"},
             {"hangbench diagnose --slurm-job 4711", "every node of a running Slurm job, merged by rank"},
             {"hangbench diagnose --from out/m/trials/x/evidence.json", "judge stored evidence again"}},
            {{0, "report produced (whether or not a hang shape matched)"},
             {2, "no such process, not inspectable, or bad usage (--slurm-job: no such running job)"},
             {3, "(--slurm-job) squeue or srun failed; the --markdown file cannot be written"}},
            "docs/diagnose.md"});
  sub->callback([args, &rc] { rc = guarded("diagnose", [&] { return run_diagnose(*args); }); });
}

}  // namespace hangbench::cli
