#include "options.hpp"

#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

namespace hangbench::nccl_teardown {

std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code) {
  Options o;
  CLI::App app{"nccl_teardown: one NCCL rank, DataLoader-like workers forked around its init, then "
               "ncclCommAbort or ncclCommDestroy, timed. Speaks hangbench's phase protocol."};
  app.add_option("--nccl-lib", o.nccl_lib, "libnccl.so to dlopen")->required();
  const std::map<std::string, Teardown> teardowns = {{"abort", Teardown::Abort}, {"destroy", Teardown::Destroy}};
  app.add_option("--teardown", o.teardown, "abort or destroy")
      ->transform(CLI::CheckedTransformer(teardowns, CLI::ignore_case));
  const std::map<std::string, Holders> holders = {
      {"after", Holders::After}, {"before", Holders::Before}, {"none", Holders::None}};
  app.add_option("--workers-forked", o.holders, "when the workers are forked: after (init), before, none")
      ->transform(CLI::CheckedTransformer(holders, CLI::ignore_case));
  app.add_option("--workers", o.workers, "number of forked workers")->check(CLI::Range(1, 64));
  app.add_option("--device", o.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  app.add_option("--allreduces", o.allreduces, "all-reduces before the teardown, each checked")
      ->check(CLI::Range(0, 100000));
  app.add_option("--count", o.count, "floats per all-reduce")->check(CLI::Range(1, 1 << 28));
  bool no_device_memory = false;
  app.add_flag("--no-device-memory", no_device_memory,
               "make no CUDA call and no all-reduce (tests of the teardown path with a stand-in NCCL)");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    *exit_code = 0;
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::cerr << "nccl_teardown: " << e.what() << " (see --help)\n";
    *exit_code = 2;
    return std::nullopt;
  }
  o.device_memory = !no_device_memory;
  return o;
}

}  // namespace hangbench::nccl_teardown
