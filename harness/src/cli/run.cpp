// `hangbench run`: runs a matrix (the embedded default without --matrix), or
// continues an interrupted run with --resume.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/shard.hpp"
#include "hangbench/store.hpp"

namespace hangbench::cli {
namespace {

// Signal handlers can only reach process-global state: this flag is it.
std::atomic<bool> g_stop_requested{false};

void request_stop(int) { g_stop_requested.store(true); }

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = request_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A reader that went away (`run | head`) interrupts the run like Ctrl-C: the
  // write fails with EPIPE instead of killing the harness, the store says
  // "interrupted", the exit code is 3 and --resume continues it.
  sigaction(SIGPIPE, &sa, nullptr);
}

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    for (std::string part; std::getline(ss, part, ',');) {
      if (!part.empty()) out.push_back(part);
    }
  }
  return out;
}

struct RunArgs {
  std::string matrix;
  std::string out;
  bool resume = false;
  int trials = 0;
  int concurrency = -1;
  double timeout = 0;
  std::vector<std::string> phase_timeouts;
  std::vector<std::string> formats;
  bool strict = false;
  std::vector<std::string> filters;
  std::vector<std::string> sets;  // --set KEY=VALUE over the matrix file
  // Given on the command line at all: 0 and -1 are values to refuse, not "unset".
  const CLI::Option* trials_given = nullptr;
  const CLI::Option* concurrency_given = nullptr;
  const CLI::Option* timeout_given = nullptr;
  const CLI::Option* out_given = nullptr;
  std::string run_id;    // --resume --run ID
  std::string progress;  // tty, plain, none; "" = tty on a terminal, else plain
  bool dry_run = false;
  std::string shard;
};

ProgressMode progress_mode(const std::string& name) {
  if (name == "tty") return ProgressMode::Tty;
  if (name == "plain") return ProgressMode::Plain;
  if (name == "none") return ProgressMode::None;
  return ::isatty(STDERR_FILENO) != 0 ? ProgressMode::Tty : ProgressMode::Plain;
}

int run_command(const RunArgs& args) {
  RunOptions opts;
  opts.out_dir = args.out;
  if (args.trials_given->count() > 0) opts.trials = args.trials;
  if (args.concurrency_given->count() > 0) opts.concurrency = args.concurrency;
  if (args.timeout_given->count() > 0) opts.timeout_s = args.timeout;
  if (!args.formats.empty()) opts.formats = split_commas(args.formats);
  opts.strict = args.strict;
  opts.log = &std::cerr;
  opts.progress = progress_mode(args.progress);
  opts.cancel = &g_stop_requested;
  return guarded("run", [&]() -> int {
    if (args.out_given->count() > 0 && args.out.empty()) {
      throw UsageError("--out is empty; give a folder (without --out: hangbench-out/<run id>)");
    }
    if (!args.run_id.empty() && !args.resume) throw UsageError("--run ID names the run --resume continues");
    opts.resume_run_id = args.run_id;
    for (const auto& f : args.filters) {
      auto eq = f.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--filter wants axis=value, got '" + f + "'");
      opts.filters.emplace_back(f.substr(0, eq), f.substr(eq + 1));
    }
    for (const auto& f : args.phase_timeouts) {
      auto eq = f.find('=');
      double seconds = 0;
      try {
        if (eq != std::string::npos) seconds = std::stod(f.substr(eq + 1));
      } catch (const std::exception&) {
      }
      if (eq == std::string::npos || eq == 0 || !(seconds > 0)) {
        throw ConfigError(
            "", 0, "--phase-timeout wants PHASE=SECONDS with SECONDS > 0, e.g. teardown_begin=5; got '" + f + "'");
      }
      opts.phase_timeouts_s[f.substr(0, eq)] = seconds;
    }
    if (!args.shard.empty()) opts.shard = parse_shard(args.shard);
    MatrixEnvironment env;
    env.overrides = args.sets;
    if (args.resume && !args.sets.empty()) {
      throw UsageError("--resume continues a run with the cells it was started with; --set would change them");
    }
    if (args.dry_run) {
      // The same checks as the run makes before it writes anything, then its plan.
      if (args.resume) throw UsageError("--dry-run plans a new run; it cannot be combined with --resume");
      std::error_code ec;
      if (!args.out.empty() && std::filesystem::exists(args.out, ec) && !std::filesystem::is_directory(args.out, ec)) {
        throw UsageError("--out " + args.out + " is a file, not a folder");
      }
      std::string path = args.matrix.empty() ? default_matrix_path() : args.matrix;
      normalize_formats(opts.formats);
      std::cout << render_dry_run(apply_run_options(load_matrix(path, env), opts), opts.shard);
      return exit_code::kOk;
    }
    install_stop_handlers();
    RunResult result;
    if (args.resume) {
      if (!args.matrix.empty()) opts.resume_matrix = load_matrix(args.matrix);
      result = resume_run(opts);
    } else {
      std::string path = args.matrix.empty() ? default_matrix_path() : args.matrix;
      result = run_matrix(load_matrix(path, env), opts);
    }
    if (auto terminal = make_exporter("terminal")) std::cout << terminal->render(result.summary);
    if (opts.shard) {
      // A shard's tallies are a share of each cell: its verdicts are not the run's.
      std::cout << "This is shard " << to_string(*opts.shard) << " of the run (" << result.summary.trials.size()
                << " trials): its counts and verdicts cover this shard only; `hangbench merge` of all "
                << opts.shard->count << " shards gives the run's.\n";
    }
    int infra = 0;
    for (const auto& c : result.summary.cells) infra += c.infra;
    // A run whose trials could not start is not "complete": say what happened.
    std::string state = result.interrupted ? " interrupted"
                        : infra > 0
                            ? " ended; " + std::to_string(infra) + " trial(s) could not run (INFRA, reasons above)"
                            : " complete";
    const std::string shard = opts.shard ? " (shard " + to_string(*opts.shard) + ")" : "";
    std::cerr << "hangbench: run " << result.run_id << shard << state << "; store " << result.store_path << "\n";
    for (const auto& f : result.written) std::cerr << "hangbench: wrote " << f << "\n";
    if (result.interrupted) {
      std::cerr << "hangbench: continue with: hangbench run --resume --out " << result.out_dir << "\n";
    }
    return result.exit_code;
  });
}

}  // namespace

void add_run_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "Run every cell of a matrix N times and report hangs with evidence");
  sub->add_option("--matrix", args->matrix, "Matrix TOML file (default: the embedded default matrix)");
  args->out_given =
      sub->add_option("--out", args->out, "Output folder with the store and reports (default: hangbench-out/<run-id>)");
  sub->add_flag("--resume", args->resume,
                "Continue the unfinished run of the store in --out (options that would change its cells are refused)");
  sub->add_option("--run", args->run_id, "With --resume: the run to continue, when the store holds several unfinished");
  args->trials_given = sub->add_option("--trials", args->trials, "Trials per cell (overrides the matrix)");
  args->concurrency_given = sub->add_option("--concurrency", args->concurrency, "Trials at once; 0 = number of cores");
  args->timeout_given = sub->add_option("--timeout", args->timeout, "Hang timeout in seconds (overrides the matrix)");
  sub->add_option("--phase-timeout", args->phase_timeouts,
                  "PHASE=S: hang when the trial has not exited S seconds after reporting PHASE (repeatable)");
  sub->add_option("--format", args->formats, "Report formats: md,json,csv,junit,html")->delimiter(',');
  sub->add_flag("--strict", args->strict, "Exit 1 also when an expectation is inconclusive");
  sub->add_option("--filter", args->filters, "Only cells with axis=value (repeatable)");
  sub->add_option("--set", args->sets,
                  "KEY=VALUE: a matrix key set from here, VALUE in TOML (stacks=false, axes.nccl=[\"2.17.1\"], "
                  "phase_timeouts.teardown_begin=8); checked as the file's own keys (repeatable)");
  sub->add_option("--progress", args->progress,
                  "tty (one line redrawn), plain (a line every 5 s, for CI logs) or none; default: tty on a "
                  "terminal, else plain")
      ->check(CLI::IsMember({"tty", "plain", "none"}));
  sub->add_flag("--dry-run", args->dry_run,
                "List the cells, their commands and trial counts (options applied) without running anything");
  sub->add_option("--shard", args->shard,
                  "K/N: run only shard K (0-based) of N of the (cell, trial) pairs; "
                  "`hangbench merge` joins the shards");
  set_help(sub, {{{"hangbench run", "the default matrix: NCCL's teardown hang at the socket level, GPU-free"},
                  {"hangbench run --dry-run --matrix M.toml --trials 50",
                   "what a run of M.toml would start, cell by cell, without running it"},
                  {"hangbench run --matrix M.toml --out out/m --filter build=2.17.1 --progress plain",
                   "one build's cells, a progress line every 5 s for a CI log"},
                  {"hangbench run --matrix M.toml --set stacks=false --set 'axes.nccl=[\"2.17.1\"]'",
                   "M.toml with two keys changed from here, without editing a copy"},
                  {"hangbench run --resume --out out/m", "continue an interrupted run"},
                  {"hangbench run --matrix M.toml --shard $SLURM_ARRAY_TASK_ID/4 --out out/shard-$SLURM_ARRAY_TASK_ID",
                   "one shard of four (then `hangbench merge`)"}},
                 {{0, "every expectation confirmed (or inconclusive, unless --strict)"},
                  {1, "an expectation contradicted (with --strict: or inconclusive)"},
                  {2, "usage or configuration error: the message names the file and line"},
                  {3, "infrastructure error: a workload could not start, the store failed, interrupted"}},
                 "docs/matrix.md (the matrix format), docs/lifecycle.md, docs/slurm.md"});
  sub->callback([&rc, args] { rc = run_command(*args); });
}

}  // namespace hangbench::cli
