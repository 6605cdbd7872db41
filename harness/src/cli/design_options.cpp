#include "cli/design_options.hpp"

namespace hangbench::cli {

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
