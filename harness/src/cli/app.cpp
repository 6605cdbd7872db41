#include <iostream>

#include "cli/commands.hpp"
#include "cli/help.hpp"
#include "hangbench/model.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench::cli {

int run_main(int argc, char** argv) {
  CLI::App app{"hangbench: turns hangs in NCCL, PyTorch and MPI into evidence"};
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
    int code = app.exit(e);
    return code == 0 ? 0 : exit_code::kUsage;  // CLI11 uses 0 for --help
  }
  if (app.get_subcommands().empty()) {
    // `hangbench` alone is no command: help, not a long run nobody asked for.
    std::cout << app.help();
    return exit_code::kUsage;
  }
  return rc;
}

}  // namespace hangbench::cli
