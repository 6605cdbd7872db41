// Each subcommand lives in its own file and registers itself on the app.
// A command stores its exit code in `rc` from its CLI11 callback.
#pragma once

#include <CLI/CLI.hpp>

namespace hangbench::cli {

int run_main(int argc, char** argv);

void add_run_command(CLI::App& app, int& rc);       // run.cpp
void add_report_command(CLI::App& app, int& rc);    // report.cpp
void add_stats_command(CLI::App& app, int& rc);     // stats.cpp
void add_diagnose_command(CLI::App& app, int& rc);  // diagnose.cpp
void add_nccl_command(CLI::App& app, int& rc);      // nccl.cpp
void add_validate_command(CLI::App& app, int& rc);  // validate.cpp
void add_history_command(CLI::App& app, int& rc);   // history.cpp
void add_evidence_command(CLI::App& app, int& rc);  // evidence.cpp
void add_merge_command(CLI::App& app, int& rc);     // merge.cpp
void add_sweep_command(CLI::App& app, int& rc);     // sweep.cpp
void add_catalog_command(CLI::App& app, int& rc);   // catalog.cpp
void add_watch_command(CLI::App& app, int& rc);     // watch.cpp

}  // namespace hangbench::cli
