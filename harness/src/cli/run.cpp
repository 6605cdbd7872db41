// `hangbench run`: runs a matrix (the embedded default without --matrix), or
// continues an interrupted run with --resume.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
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
  std::string shard;
};

int run_command(const RunArgs& args) {
  RunOptions opts;
  opts.out_dir = args.out;
  if (args.trials != 0) opts.trials = args.trials;
  if (args.concurrency != -1) opts.concurrency = args.concurrency;
  if (args.timeout != 0) opts.timeout_s = args.timeout;
  if (!args.formats.empty()) opts.formats = split_commas(args.formats);
  opts.strict = args.strict;
  opts.log = &std::cerr;
  opts.progress = ::isatty(STDERR_FILENO) != 0;
  opts.cancel = &g_stop_requested;
  try {
    for (const auto& f : args.filters) {
      auto eq = f.find('=');
      if (eq == std::string::npos || eq == 0) throw ConfigError("", 0, "--filter wants axis=value, got '" + f + "'");
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
        throw ConfigError("", 0, "--phase-timeout wants PHASE=SECONDS with SECONDS > 0, e.g. teardown_begin=5; got '" + f + "'");
      }
      opts.phase_timeouts_s[f.substr(0, eq)] = seconds;
    }
    if (!args.shard.empty()) opts.shard = parse_shard(args.shard);
    install_stop_handlers();
    RunResult result;
    if (args.resume) {
      result = resume_run(opts);
    } else {
      std::string path = args.matrix.empty() ? default_matrix_path() : args.matrix;
      result = run_matrix(load_matrix(path), opts);
    }
    if (auto terminal = make_exporter("terminal")) std::cout << terminal->render(result.summary);
    std::cerr << "hangbench: run " << result.run_id << (result.interrupted ? " interrupted" : " complete")
              << "; store " << result.store_path << "\n";
    for (const auto& f : result.written) std::cerr << "hangbench: wrote " << f << "\n";
    if (result.interrupted) {
      std::cerr << "hangbench: continue with: hangbench run --resume --out " << result.out_dir << "\n";
    }
    return result.exit_code;
  } catch (const ConfigError& e) {
    std::cerr << "hangbench: error: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const StoreError& e) {
    std::cerr << "hangbench: store error: " << e.what() << "\n";
    return exit_code::kInfra;
  } catch (const std::exception& e) {
    std::cerr << "hangbench: infrastructure error: " << e.what() << "\n";
    return exit_code::kInfra;
  }
}

}  // namespace

void add_run_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "Run every cell of a matrix N times and report hangs with evidence");
  sub->add_option("--matrix", args->matrix, "Matrix TOML file (default: the embedded default matrix)");
  sub->add_option("--out", args->out, "Output folder with the store and reports (default: hangbench-out/<run-id>)");
  sub->add_flag("--resume", args->resume, "Continue the latest unfinished run of the store in --out");
  sub->add_option("--trials", args->trials, "Trials per cell (overrides the matrix)");
  sub->add_option("--concurrency", args->concurrency, "Trials at once; 0 = number of cores");
  sub->add_option("--timeout", args->timeout, "Hang timeout in seconds (overrides the matrix)");
  sub->add_option("--phase-timeout", args->phase_timeouts,
                  "PHASE=S: hang when the trial has not exited S seconds after reporting PHASE (repeatable)");
  sub->add_option("--format", args->formats, "Report formats: md,json,csv,junit,html")->delimiter(',');
  sub->add_flag("--strict", args->strict, "Exit 1 also when an expectation is inconclusive");
  sub->add_option("--filter", args->filters, "Only cells with axis=value (repeatable)");
  sub->add_option("--shard", args->shard,
                  "K/N: run only shard K (0-based) of N of the (cell, trial) pairs; "
                  "`hangbench merge` joins the shards");
  sub->callback([&rc, args] { rc = run_command(*args); });
}

}  // namespace hangbench::cli
