// `hangbench merge STORE... --out DIR [--format F] [--strict]`: the shards of a
// `run --shard K/N` job array made into one run, with every report.
#include "hangbench/merge.hpp"

#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/store.hpp"

namespace hangbench::cli {
namespace {

int merge_command(const MergeOptions& options) {
  return guarded("merge", [&]() -> int {
    MergeResult result = merge_shards(options);
    if (auto terminal = make_exporter("terminal")) std::cout << terminal->render(result.summary);
    std::cerr << "hangbench: merged " << options.stores.size() << " shards into run " << result.run_id << "; store "
              << result.store_path << "\n";
    for (const auto& f : result.written) std::cerr << "hangbench: wrote " << f << "\n";
    return result.exit_code;
  });
}

}  // namespace

void add_merge_command(CLI::App& app, int& rc) {
  auto options = std::make_shared<MergeOptions>();
  auto* sub = app.add_subcommand("merge",
                                 "Make one run, with every report, "
                                 "out of the stores of `run --shard K/N` jobs");
  sub->add_option("stores", options->stores, "shard stores: hangbench.sqlite files or the folders holding them")
      ->required();
  sub->add_option("--out", options->out_dir, "Output folder for the merged store and reports (must hold no store)")
      ->required();
  sub->add_option("--format", options->formats, "Report formats: md,json,csv,junit,html")->delimiter(',');
  sub->add_flag("--strict", options->strict, "Exit 1 also when an expectation is inconclusive");
  set_help(sub, {{{"hangbench merge out/shard-0 out/shard-1 out/shard-2 out/shard-3 --out out/merged",
                   "four shards of one matrix made one run, with every report"}},
                 {{0, "as for `run`: every expectation of the merged run confirmed (or inconclusive)"},
                  {1, "an expectation of the merged run contradicted"},
                  {2,
                   "shards that do not make one run (a duplicate or missing trial or shard, different matrices or "
                   "builds); nothing written"},
                  {3, "a store cannot be read or written"}},
                 "docs/slurm.md"});
  sub->callback([&rc, options] { rc = merge_command(*options); });
}

}  // namespace hangbench::cli
