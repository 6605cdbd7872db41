// `hangbench stats fisher A B [--json] [--alpha A]`: Fisher's exact test on
// tallies typed by hand, e.g. `hangbench stats fisher 8/98 0/120`.
#include "hangbench/stats.hpp"

#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/fisher_report.hpp"
#include "hangbench/model.hpp"

namespace hangbench::cli {
namespace {

struct FisherArgs {
  std::string a, b;
  bool json = false;
  double alpha = 0.01;
};

int fisher_command(const FisherArgs& args) {
  std::string error;
  auto a = stats::parse_tally(args.a, &error);
  if (!a) throw UsageError(error);
  auto b = stats::parse_tally(args.b, &error);
  if (!b) throw UsageError(error);
  if (!(args.alpha > 0 && args.alpha < 1)) throw UsageError("--alpha must lie strictly between 0 and 1");
  if (args.json)
    std::cout << stats::fisher_report_json(*a, *b, args.alpha).dump(2) << "\n";
  else
    std::cout << stats::fisher_report_text(*a, *b, args.alpha);
  return exit_code::kOk;
}

}  // namespace

void add_stats_command(CLI::App& app, int& rc) {
  auto* stats_cmd = app.add_subcommand("stats", "Exact statistics on your own tallies");
  stats_cmd->require_subcommand(1);
  set_help(stats_cmd,
           {{{"hangbench stats fisher 8/98 0/120", "are 8 hangs in 98 and 0 in 120 different?"}},
            {{0, "the test ran (whatever its p-value)"}, {2, "no such statistic, or a tally is not HANGS/TRIALS"}},
            "docs/statistics.md"});
  auto args = std::make_shared<FisherArgs>();
  auto* fisher = stats_cmd->add_subcommand(
      "fisher", "Fisher's exact test of two hang tallies HANGS/TRIALS, e.g. `fisher 8/98 0/120`");
  fisher->add_option("a", args->a, "first tally, HANGS/TRIALS")->required();
  fisher->add_option("b", args->b, "second tally, HANGS/TRIALS")->required();
  fisher->add_flag("--json", args->json, "print JSON (schema hangbench.fisher/1)");
  fisher->add_option("--alpha", args->alpha, "significance level for the verdict line (default 0.01)");
  set_help(fisher,
           {{{"hangbench stats fisher 8/98 0/120", "are 8 hangs in 98 and 0 in 120 different?"},
             {"hangbench stats fisher 8/98 0/120 --json", "the same as hangbench.fisher/1 JSON"}},
            {{0, "the test ran (whatever its p-value)"}, {2, "a tally is not HANGS/TRIALS with 0 <= HANGS <= TRIALS"}},
            "docs/statistics.md"});
  fisher->callback([args, &rc] { rc = guarded("stats fisher", [&] { return fisher_command(*args); }); });
}

}  // namespace hangbench::cli
