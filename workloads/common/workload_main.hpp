// The main of a workload program: parse its command line, then run it, with the exit codes
// every workload documents (workload_exit_codes.hpp): the parser's own code (0 for --help,
// 2 for bad usage), 3 for infrastructure with its reason as the metric infra_error (what
// the harness reads to tell "could not run here" from a failure), 4 for any other error.
#pragma once

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "log_line.hpp"
#include "phase.hpp"
#include "workload_exit_codes.hpp"

namespace hangbench::workload {

// What stops a run before it can show anything: no GPU, NCCL not loadable, a rank that
// could not start, an init that failed.
struct InfraError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `parse(args, &exit_code)` returns the options or nullopt with the exit code set;
// `run(options)` returns the workload's exit code. `before_run(options)` runs outside the
// guard (a re-exec, for one).
template <class Parse, class Run, class BeforeRun>
int workload_main(const char* name, int argc, char** argv, Parse parse, Run run, BeforeRun before_run) {
  set_log_name(name);
  int exit_code = 0;
  const auto options = parse(std::vector<std::string>(argv + 1, argv + argc), &exit_code);
  if (!options) return exit_code;
  before_run(*options);
  try {
    return run(*options);
  } catch (const InfraError& e) {
    log_line(e.what());
    phase::metric("infra_error", e.what());
    return workload_exit::kInfrastructure;
  } catch (const std::exception& e) {
    log_line(e.what());
    return workload_exit::kRunError;
  }
}

template <class Parse, class Run>
int workload_main(const char* name, int argc, char** argv, Parse parse, Run run) {
  return workload_main(name, argc, argv, parse, run, [](const auto&) {});
}

}  // namespace hangbench::workload
