#include "launch_options.hpp"

#include "cli.hpp"
#include "two_rank_options.hpp"

namespace hangbench::nccl_launch_blocking {

std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code) {
  Options o;
  workload::Cli cli("nccl_launch_blocking",
                    "nccl_launch_blocking: NCCL issue 750's hang. One or two NCCL ranks on one GPU (each its own "
                    "NCCL host, so they talk through NET/Socket and the proxy thread), CUDA_LAUNCH_BLOCKING=1, "
                    "checked all-reduces. Releases 2.13 to 2.16 launch the kernel before the proxy has its work: "
                    "with a peer the launch never returns. Speaks hangbench's phase protocol.");
  CLI::App& app = cli.app();
  workload::add_two_rank_options(app, o);
  app.add_option("--ranks", o.ranks, "1 (no peer: a control) or 2 (rank 0 starts rank 1)")->check(CLI::Range(1, 2));
  app.add_option("--allreduces", o.allreduces, "all-reduces, each checked")->check(CLI::Range(1, 1000));
  app.add_option("--count", o.count, "floats per all-reduce")->check(CLI::Range(1, 1 << 28));
  app.add_option("--launch-blocking", o.launch_blocking, "1: CUDA_LAUNCH_BLOCKING=1 (the hang), 0: unset");
  const workload::CliResult parsed = cli.parse(args, [&] { workload::check_two_rank_options(o); });
  if (!parsed.run) {
    workload::print(parsed);
    *exit_code = parsed.exit_code;
    return std::nullopt;
  }
  return o;
}

}  // namespace hangbench::nccl_launch_blocking
