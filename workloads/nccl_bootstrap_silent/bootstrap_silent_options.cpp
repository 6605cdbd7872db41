#include "bootstrap_silent_options.hpp"

#include <map>

#include "cli.hpp"
#include "two_rank_options.hpp"

namespace hangbench::nccl_bootstrap_silent {

const char* intruder_word(IntruderMode mode) {
  switch (mode) {
    case IntruderMode::None:
      return "none";
    case IntruderMode::Silent:
      return "silent";
    case IntruderMode::Closed:
      return "closed";
    case IntruderMode::WrongMagic:
      return "wrong-magic";
  }
  return "none";
}

std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code) {
  Options o;
  workload::Cli cli("nccl_bootstrap_silent",
                    "nccl_bootstrap_silent: two NCCL ranks on one GPU (each its own NCCL host). Before the ranks "
                    "initialise, a process that is not a rank connects to the bootstrap root whose address the "
                    "unique id carries. A silent connection is accepted first and waited on for its magic with "
                    "no timeout, so ncclCommInitRank never returns. Speaks hangbench's phase protocol.");
  CLI::App& app = cli.app();
  workload::add_two_rank_options(app, o);
  const std::map<std::string, IntruderMode> modes = {{"none", IntruderMode::None},
                                                     {"silent", IntruderMode::Silent},
                                                     {"closed", IntruderMode::Closed},
                                                     {"wrong-magic", IntruderMode::WrongMagic}};
  app.add_option("--intruder", o.intruder,
                 "none, silent (connects, sends nothing), closed (connects and closes) or wrong-magic (8 bytes "
                 "that are not the job's magic)")
      ->transform(CLI::CheckedTransformer(modes, CLI::ignore_case));
  app.add_option("--init-deadline", o.init_deadline,
                 "seconds: a non-blocking init aborted when it has not finished by then (0: a blocking init)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--count", o.count, "floats in the all-reduce after init")->check(CLI::Range(1, 1 << 28));
  const workload::CliResult parsed = cli.parse(args, [&] { workload::check_two_rank_options(o); });
  if (!parsed.run) {
    workload::print(parsed);
    *exit_code = parsed.exit_code;
    return std::nullopt;
  }
  return o;
}

}  // namespace hangbench::nccl_bootstrap_silent
