#include "first_collective_options.hpp"

#include <map>

#include "cli.hpp"
#include "two_rank_options.hpp"

namespace hangbench::nccl_first_collective {

std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code) {
  Options o;
  workload::Cli cli("nccl_first_collective",
                    "nccl_first_collective: two NCCL ranks on one GPU (each its own NCCL host: NET/Socket). "
                    "Rank 0 posts its first all-reduce, then writes to a pipe; rank 1 reads the pipe before it "
                    "posts its own. Before NCCL 2.22.3 the post only queues a kernel; from 2.22.3 the first "
                    "collective connects the ring, which needs rank 1 inside NCCL: the post never returns "
                    "(NCCL_RUNTIME_CONNECT=0 connects at init instead). Speaks hangbench's phase protocol.");
  CLI::App& app = cli.app();
  workload::add_two_rank_options(app, o);
  const std::map<std::string, Order> orders = {{"post-then-signal", Order::PostThenSignal},
                                               {"warmup-first", Order::WarmupFirst}};
  app.add_option("--order", o.order,
                 "post-then-signal (rank 0 signals rank 1 after posting its first all-reduce) or warmup-first "
                 "(one all-reduce of both ranks before that)")
      ->transform(CLI::CheckedTransformer(orders, CLI::ignore_case));
  app.add_option("--count", o.count, "floats per all-reduce")->check(CLI::Range(1, 1 << 28));
  app.add_option("--signal-fd", o.signal_fd, "(internal) the pipe rank 1 reads rank 0's signal from");
  const workload::CliResult parsed = cli.parse(args, [&] {
    workload::check_two_rank_options(o);
    if (o.rank > 0 && o.signal_fd < 0) throw workload::UsageError("--rank 1 needs --signal-fd");
  });
  if (!parsed.run) {
    workload::print(parsed);
    *exit_code = parsed.exit_code;
    return std::nullopt;
  }
  return o;
}

}  // namespace hangbench::nccl_first_collective
