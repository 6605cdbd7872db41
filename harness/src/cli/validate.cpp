// `hangbench validate --nccl LIB`: wiring only; the design and the rule live in
// harness/src/validate (hangbench/validate.hpp). Exit 0 fixed / not affected /
// not vulnerable, 1 vulnerable, 2 usage, 3 inconclusive or the run failed.
#include "hangbench/validate.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "cli/design_options.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "cli/validate_hang.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench::cli {
namespace {

struct ValidateArgs {
  validate::Request request;
  std::string markdown, json;
  std::vector<std::string> hangs;  // --hang ID|all: catalog entries instead of the teardown check
  bool offline = false;            // --patch: never download NCCL's source
};

int validate_command(ValidateArgs args) {
  args.request.argv = command_line();
  if (!args.hangs.empty()) return validate_against_catalog(args.request, args.hangs, args.markdown, args.json);
  validate::Result result;
  const int rc = guarded("validate", [&]() -> int {
    result = validate::run(args.request, nullptr, &std::cerr);
    return exit_code::kOk;
  });
  if (rc != exit_code::kOk) return rc;
  for (const auto& b : result.built) std::cout << fmt::format("  built {:<22} {:<26} {}\n", b.name, b.how, b.library);
  for (const validate::ArmTally* a : {&result.candidate, &result.vulnerable, &result.fixed}) {
    std::cout << fmt::format(
        "  {:<10} {:>3}/{:<3} hung in the teardown ({} stopped before it, {} crashed/failed in "
        "it)  {}\n",
        validate::to_string(a->role), a->teardown_hangs, a->counted(), a->before_teardown, a->teardown_failures,
        a->library);
  }
  std::cout << validate::verdict_line(result) << fmt::format(" [{:.1f} s]\n", result.seconds_to_verdict);
  const int written = guarded("validate", [&]() -> int {
    if (!args.markdown.empty()) write_file_atomically(args.markdown, validate::to_markdown(result));
    if (!args.json.empty()) write_file_atomically(args.json, validate::to_json(result).dump(2) + "\n");
    return exit_code::kOk;
  });
  if (written != exit_code::kOk) return written;
  return validate::exit_code_of(result.decision.verdict);
}

}  // namespace

void add_validate_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<ValidateArgs>();
  validate::Request& r = args->request;
  auto* sub = app.add_subcommand(
      "validate",
      "Does LIB carry NCCL's teardown hang? Runs LIB beside the pinned vulnerable and fixed builds and reads its "
      "ncclSocketClose; exit 0 fixed / not affected / not vulnerable, 1 vulnerable, 3 inconclusive");
  auto* nccl_lib = sub->add_option("--nccl", r.library, "the libnccl.so to judge");
  auto* patch = sub->add_option("--patch", r.build.patched.patches,
                                "a vendor's patch (patch -p1, path from the working directory): build it on --base, "
                                "then judge that build as --nccl would (the references are built too)")
                    ->expected(1)
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  nccl_lib->excludes(patch);
  sub->add_option("--base", r.build.patched.base, "--patch: the NCCL variant the patch applies to")
      ->capture_default_str()
      ->needs(patch);
  sub->add_option("--name", r.build.patched.name, "--patch: its variant's name (default BASE+<patch file name>)")
      ->needs(patch);
  sub->add_option("--git-dir", r.build.git_dir, "--patch: local NCCL git directory (as for nccl build)")->needs(patch);
  sub->add_option("--source-tarball", r.build.source_tarballs, "--patch: local NCCL source tarball (as for nccl build)")
      ->needs(patch);
  sub->add_flag("--offline", args->offline, "--patch: never download NCCL's pinned source tarball")->needs(patch);
  sub->add_option("--cuda-home", r.build.cuda_home, "--patch: CUDA toolkit to build with")
      ->capture_default_str()
      ->needs(patch);
  sub->add_option("--reference-dir", r.reference_dir,
                  "folder with <variant>/lib/libnccl.so.2 of the reference builds (default $HANGBENCH_NCCL_CACHE)");
  sub->add_option("--vulnerable", r.vulnerable_variant, "vulnerable reference variant")->capture_default_str();
  sub->add_option("--fixed", r.fixed_variant, "fixed reference variant")->capture_default_str();
  const std::map<std::string, validate::Check> checks = {{"teardown", validate::Check::Teardown},
                                                         {"ddp", validate::Check::Ddp}};
  words_option(sub, "--check", r.check, checks,
               "teardown: nccl_teardown (NCCL alone, about a second a trial); ddp: the PyTorch DDP job ddp_abort")
      ->default_str("teardown");
  sub->add_option("--trials", r.trials, "trials per library (a fixed design)")->capture_default_str();
  add_reference_trials_option(*sub, r);
  sub->add_option("--timeout", r.timeout_s,
                  "whole-trial hang timeout in seconds (default: learned from the fixed reference, else 20)");
  sub->add_option("--teardown-timeout", r.teardown_timeout_s,
                  "seconds a trial may live after --teardown-phase (default: learned from the fixed reference's "
                  "healthy teardowns, else 3 for teardown, 5 for ddp)");
  sub->add_option("--teardown-phase", r.teardown_phase, "the workload's phase where the teardown begins")
      ->capture_default_str();
  add_world_options(*sub, r);
  sub->add_option("--alpha", r.alpha, "significance level of each Fisher test")->capture_default_str();
  sub->add_option("--workload", r.workload, "workload program (default: the built program of --check)");
  sub->add_option(
         "--workload-arg", r.extra_workload_args,
         "an argument appended to the workload's command line (repeat for more; e.g. --workload-arg=--sync=blocking)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--out", r.out_dir, "folder of validate runs and of the reference index")->capture_default_str();
  sub->add_flag("--no-reuse", r.no_reuse, "run the references again even when the store has them");
  sub->add_option("--hang", args->hangs,
                  "a catalog entry (hangbench catalog list), or all: judge LIB with each entry's reproducer and "
                  "references (wheels from the NCCL cache) instead of the teardown check; repeat for more (not "
                  "with --patch)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->excludes(patch);
  sub->add_option("--markdown", args->markdown, "write the evidence as Markdown to this file");
  sub->add_option("--json", args->json, "write the evidence as JSON (hangbench.validate/1) to this file");
  set_help(sub, {{{"hangbench validate --nccl /usr/lib/x86_64-linux-gnu/libnccl.so.2",
                   "does this NCCL have the teardown hang? (the references from $HANGBENCH_NCCL_CACHE)"},
                  {"hangbench validate --nccl libnccl.so.2 --check ddp --markdown verdict.md",
                   "the same through the PyTorch DDP job, the evidence as Markdown"},
                  {"hangbench validate --nccl vendor/libnccl.so.2 --hang all --markdown catalog.md",
                   "a vendor build against every known hang of the catalog at once (1: vulnerable to one)"},
                  {"hangbench validate --patch acme-teardown.patch --base 2.17.1",
                   "a vendor's patch in one go: build it on 2.17.1 (and the references), inspect, judge"}},
                 {{0, "fixed, not affected or not vulnerable"},
                  {1, "vulnerable"},
                  {2,
                   "usage or configuration error (a --patch that is not a file or does not apply too): the "
                   "message names the file and line"},
                  {3, "inconclusive (the phase and reason are printed), or building --patch failed (see make.log)"}},
                 "docs/validate.md"});
  sub->callback([args, &rc] {
    args->request.build.allow_download = !args->offline;
    rc = validate_command(*args);
  });
}

}  // namespace hangbench::cli
