// `hangbench diagnose PID... | --tree PID | --from EVIDENCE.json [--stacks] [--timeout S] [--json] [--markdown FILE]`
// The evidence of a hang in any live process: read-only unless --stacks.
// Only the options: reading, judging and writing are diagnose::run_command's.
#include "hangbench/diagnose.hpp"

#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"

namespace hangbench::cli {

namespace {

// --timeout bounds the stacks of all the processes together: seconds, above 0 and at most an hour.
constexpr double kMaxDiagnoseTimeout = 3600;

// Seconds within (0 or above, per allow_zero) and kMaxDiagnoseTimeout; NaN and infinity fail both.
CLI::Validator seconds_check(bool allow_zero, const std::string& example) {
  return CLI::Validator(
      [allow_zero, example](std::string& text) -> std::string {
        double v = -1;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) v = -1;
        } catch (const std::exception&) {
        }
        if ((allow_zero ? v >= 0 : v > 0) && v <= kMaxDiagnoseTimeout) return "";
        return "'" + text + "' is not allowed: give a number of seconds " + (allow_zero ? "from 0" : "above 0") +
               " and at most " + std::to_string(static_cast<int>(kMaxDiagnoseTimeout)) + " (e.g. " + example + ")";
      },
      "");
}

}  // namespace

void add_diagnose_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<diagnose::CommandOptions>();
  auto* sub = app.add_subcommand(
      "diagnose", "Evidence of a hang in live processes: threads, sockets, who holds them, known hang shapes");
  sub->add_option("pids", args->request.pids, "process ids to read");
  sub->add_option("--tree", args->request.tree_root, "read this process and all its descendants");
  sub->add_flag("--stacks", args->request.stacks,
                "native stacks (libdw, in-process) and Python frames of every target (pauses each thread briefly)");
  sub->add_option("--timeout", args->request.debugger.timeout_s,
                  "bound on the stacks of all processes together, seconds (default 20, at most 3600)")
      ->check(seconds_check(false, "20"));
  sub->add_option("--fr-wait", args->request.debugger.flight_recorder_wait_s,
                  "seconds to wait for each rank's Flight Recorder dump once asked through its pipe (default: two of "
                  "PyTorch's monitor polls and 0.5 s, at most a quarter of --timeout, up to 10 s while a thread is "
                  "seen writing the dump; given: at most --timeout)")
      ->check(seconds_check(true, "15"));
  sub->add_option(
      "--debugger", args->request.debugger.program,
      "also a debugger: cuda-gdb (device state of the processes with a CUDA context) or gdb (every target)");
  sub->add_flag("--debugger-everywhere", args->request.debugger.everywhere,
                "hand every target to --debugger, even those without a CUDA context (the old path, for comparison)");
  sub->add_option("--symbols", args->request.debugger.symbols,
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
  sub->callback([args, &rc] { rc = guarded("diagnose", [&] { return diagnose::run_command(*args, std::cout); }); });
}

}  // namespace hangbench::cli
