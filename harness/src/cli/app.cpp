#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/help.hpp"
#include "hangbench/model.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench::cli {

namespace {

// What a command printed must have reached its reader: a full disk or a closed pipe
// on stdout is an infrastructure error (exit 3) naming it, not a silent success.
int checked_stdout(int rc) {
  std::cout.flush();
  errno = 0;
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return rc;
  const int err = errno;
  std::cerr << "hangbench: infrastructure error: cannot write standard output" << (err ? ": " : "")
            << (err ? std::strerror(err) : "") << "\n";
  return rc == exit_code::kOk || rc == exit_code::kContradicted ? exit_code::kInfra : rc;
}

// One value per flag: CLI11 lets an option that holds a list take every word after
// it, so `sweep --hang ID LIB...` put the libraries into --hang and then said "no
// library to sweep". A list is given by repeating its flag (or with commas where the
// option says so); words after a flag's value are the command's positionals.
void one_value_per_flag(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_positional()) option->allow_extra_args(false);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) one_value_per_flag(*sub);
}

}  // namespace

int run_main(int argc, char** argv) {
  // Named, so that Usage lines say `hangbench run`, not the binary's path (argv[0]).
  CLI::App app{"hangbench: turns hangs in NCCL, PyTorch and MPI into evidence", "hangbench"};
  app.formatter(help_formatter());  // before the commands: each takes its parent's
  app.set_version_flag("--version", std::string(HANGBENCH_VERSION) + " (" + git_commit() + ")");
  app.require_subcommand(0, 1);
  int rc = exit_code::kOk;
  add_run_command(app, rc);
  add_report_command(app, rc);
  add_stats_command(app, rc);
  add_diagnose_command(app, rc);
  add_nccl_command(app, rc);
  add_validate_command(app, rc);
  add_history_command(app, rc);
  add_evidence_command(app, rc);
  add_merge_command(app, rc);
  add_sweep_command(app, rc);
  add_catalog_command(app, rc);
  add_watch_command(app, rc);
  one_value_per_flag(app);
  set_help(&app,
           {{{"hangbench run", "the GPU-free default matrix: NCCL 2.17.1's teardown hang, reproduced and explained"},
             {"hangbench run --dry-run", "what that would run, without running it"},
             {"hangbench stats fisher 8/98 0/120", "Fisher's exact test of two tallies"},
             {"hangbench diagnose --tree PID --stacks", "why a live process is stuck"},
             {"hangbench catalog list", "the known hangs, with the releases hangbench measured them in"},
             {"hangbench COMMAND --help", "each command's options, examples and exit codes"}},
            {{0, "every expectation confirmed (or inconclusive, unless --strict)"},
             {1, "an expectation contradicted (validate: vulnerable; history check, sweep: a regression)"},
             {2, "usage or configuration error: the message names the file and line"},
             {3, "infrastructure error: a workload could not start, the machine misbehaved, interrupted"}},
            "README.md, then docs/architecture.md; every command's docs/*.md is named in its --help"});
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // An unknown command or option is told the nearest names, not "not expected: runn".
    std::cerr << usage_error_message(app, e) << "\n";
    return exit_code::kUsage;
  }
  if (app.get_subcommands().empty()) {
    // `hangbench` alone is no command: help, not a long run nobody asked for.
    std::cout << app.help();
    return exit_code::kUsage;
  }
  return checked_stdout(rc);
}

}  // namespace hangbench::cli
