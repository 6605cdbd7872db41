// `hangbench sweep LIB... | --list FILE`: wiring only; see hangbench/sweep.hpp.
// Exit 0 the table is complete, 1 a release changed verdict or a new release is
// vulnerable (with --history), 2 usage, 3 the references did not separate or the run failed.
#include "hangbench/sweep.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "cli/design_options.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench::cli {
namespace {

struct SweepArgs {
  sweep::Request request;
  std::vector<std::string> libraries;
  std::string list;
  std::string out = "hangbench-out/sweep";
  std::vector<std::string> hangs;  // --hang ID, repeated
};

int sweep_command(SweepArgs args) {
  sweep::Request& r = args.request;
  r.argv = command_line();
  r.design.out_dir = args.out;
  return guarded("sweep", [&]() -> int {
    r.libraries = args.libraries;
    if (!args.list.empty()) {
      for (auto& lib : sweep::read_list(args.list)) r.libraries.push_back(lib);
    }
    r.hangs = args.hangs;
    const sweep::Result result = sweep::run(r, nullptr, &std::cerr);
    std::filesystem::create_directories(args.out);
    write_file_atomically((std::filesystem::path(args.out) / "release-table.md").string(), sweep::to_markdown(result));
    write_file_atomically((std::filesystem::path(args.out) / "release-table.json").string(),
                          sweep::to_json(result).dump(2) + "\n");
    write_file_atomically((std::filesystem::path(args.out) / "release-table.html").string(),
                          sweep::to_html(result, args.out));
    std::cout << sweep::to_markdown(result);
    std::cerr << "sweep: release-table.{md,json,html} in " << args.out << "\n";
    return sweep::exit_code_of(result);
  });
}

}  // namespace

void add_sweep_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<SweepArgs>();
  validate::Request& d = args->request.design;
  auto* sub = app.add_subcommand(
      "sweep",
      "Which NCCL releases carry the teardown hang? validate's design over many libraries at once, one release "
      "table (Markdown, JSON, HTML)");
  sub->add_option("libraries", args->libraries, "libnccl.so files to judge");
  sub->add_option("--list", args->list, "a file with one library path per line ('#' comments)");
  sub->add_option("--out", args->out, "folder of the runs, the reference index and the release table")
      ->capture_default_str();
  sub->add_option("--reference-dir", d.reference_dir,
                  "folder with <variant>/lib/libnccl.so.2 of the reference builds (default $HANGBENCH_NCCL_CACHE)");
  sub->add_option("--vulnerable", d.vulnerable_variant, "vulnerable reference variant")->capture_default_str();
  sub->add_option("--fixed", d.fixed_variant, "fixed reference variant")->capture_default_str();
  const std::map<std::string, validate::Check> checks = {{"teardown", validate::Check::Teardown},
                                                         {"ddp", validate::Check::Ddp}};
  words_option(sub, "--check", d.check, checks, "teardown (nccl_teardown, default) or ddp (the PyTorch DDP job)")
      ->default_str("teardown");
  sub->add_option("--hang", args->hangs,
                  "a catalog entry (hangbench catalog list): run its reproducer and references instead of the "
                  "teardown check; repeat for more: the table gains one column per entry (release x known hang); "
                  "'all': every entry with a release reproducer")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--trials", d.trials, "trials per library")->capture_default_str();
  add_reference_trials_option(*sub, d);
  sub->add_option("--concurrency", args->request.concurrency, "trials at once (default: the cores)")
      ->check(zero_or_more("a number of trials at once"));
  sub->add_option("--timeout", d.timeout_s, "whole-trial hang timeout in seconds (default 20)");
  sub->add_option(
      "--teardown-timeout", d.teardown_timeout_s,
      "seconds a trial may live after the teardown began (default 8: a healthy abort under the sweep's load)");
  add_world_options(*sub, d);
  sub->add_option("--alpha", d.alpha, "significance level of each Fisher test")->capture_default_str();
  sub->add_option("--workload", d.workload, "workload program (default: the built program of --check)");
  sub->add_option(
         "--workload-arg", d.extra_workload_args,
         "an argument appended to the workload's command line (repeat for more; e.g. --workload-arg=--sync=blocking)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_flag("--no-reuse", d.no_reuse, "run the references again even when the store has them");
  sub->add_flag("--resume", d.reuse_candidates,
                "go on from the sweeps this --out already holds: every library and reference an earlier run finished "
                "(same bytes, workload and trials) is reused, only the rest run; for a sweep cut off by a time limit, "
                "or one given more libraries");
  sub->add_option("--history", args->request.history,
                  "SQLite file of each release's verdicts: exit 1 when one changes or a new release is vulnerable");
  set_help(sub,
           {{{"hangbench sweep .cache/nccl/wheels/*/lib/libnccl.so.2 --out sweep",
              "every fetched NVIDIA wheel judged in one wave; sweep/release-table.{md,json,html}"},
             {"hangbench sweep --hang nccl-launch-blocking-proxy --list wheels.txt --trials 4 --reference-trials 16",
              "a known hang's reproducer over the libraries (references: its wheels among them), 4 trials each "
              "and 16 on the two references every library is compared with"},
             {"hangbench sweep --hang nccl-socket-close-alias --hang nccl-launch-blocking-proxy --list w.txt",
              "every known hang checked at once: one column per entry, each cell a verdict and its p"},
             {"hangbench sweep --hang all --list wheels.txt --trials 4 --reference-trials 12",
              "the release x known-hang table: every catalog entry with a release reproducer, every wheel"},
             {"hangbench sweep --hang all --list more-wheels.txt --trials 4 --reference-trials 12 --resume",
              "the same table, resumed after a time limit or grown by more wheels: what the folder finished is reused"},
             {"hangbench sweep --list libs.txt --history sweep/verdicts.sqlite",
              "nightly: exit 1 when a release changes verdict or a new one is vulnerable"}},
            {{0, "the table is complete and no release changed verdict"},
             {1, "(--history) a release changed verdict, or a new release is vulnerable"},
             {2, "usage or configuration error: the message names the file and line"},
             {3, "the references did not separate, or the run failed"}},
            "docs/validate.md"});
  sub->callback([args, &rc] { rc = sweep_command(*args); });
}

}  // namespace hangbench::cli
