#include "cli/design_options.hpp"

namespace hangbench::cli {

void add_reference_trials_option(CLI::App& sub, validate::Request& r) {
  sub.add_option("--reference-trials", r.reference_trials,
                 "trials per reference (default: --trials); the references serve every library, so a sweep "
                 "of many reaches alpha with fewer trials each, e.g. --trials 4 --reference-trials 16")
      ->check(CLI::Range(1, 100000));
}

void add_world_options(CLI::App& sub, validate::Request& r) {
  sub.add_option("--ranks", r.ranks,
                 "ranks per trial, started by mpirun (with --check ddp): a vendor library judged across ranks")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  sub.add_option("--placement", r.placement,
                 "with --ranks > 1: shared-gpu (every rank on GPU 0, each its own NCCL host, NET/Socket between "
                 "them) or gpu-per-rank")
      ->check(CLI::IsMember({"shared-gpu", "gpu-per-rank"}))
      ->capture_default_str();
}

}  // namespace hangbench::cli
