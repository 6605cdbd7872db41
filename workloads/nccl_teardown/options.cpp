#include "options.hpp"

#include <map>

#include "cli.hpp"

namespace hangbench::nccl_teardown {

std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code) {
  Options o;
  workload::Cli cli("nccl_teardown",
                    "nccl_teardown: one NCCL rank, DataLoader-like workers forked around its init, then "
                    "ncclCommAbort or ncclCommDestroy, timed. Speaks hangbench's phase protocol.");
  CLI::App& app = cli.app();
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
  const std::map<std::string, SyncMode> syncs = {
      {"auto", SyncMode::Auto}, {"spin", SyncMode::Spin}, {"yield", SyncMode::Yield}, {"blocking", SyncMode::Blocking}};
  app.add_option("--sync", o.sync, "how CUDA waits for the GPU: auto (CUDA's choice), spin, yield, blocking")
      ->transform(CLI::CheckedTransformer(syncs, CLI::ignore_case));
  app.add_option("--cuda-connections", o.cuda_connections,
                 "hardware work queues per CUDA context (CUDA_DEVICE_MAX_CONNECTIONS); 0 = CUDA's default. With "
                 "many trials on one GPU, 1 makes their contexts several times faster to create")
      ->check(CLI::Range(0, 32));
  bool no_device_memory = false;
  app.add_flag("--no-device-memory", no_device_memory,
               "make no CUDA call and no all-reduce (tests of the teardown path with a stand-in NCCL)");
  const workload::CliResult parsed = cli.parse(args);
  if (!parsed.run) {
    workload::print(parsed);
    *exit_code = parsed.exit_code;
    return std::nullopt;
  }
  o.device_memory = !no_device_memory;
  return o;
}

}  // namespace hangbench::nccl_teardown
