// Command line of pp_pipeline, through workloads/common/cli.hpp (CLI11, header
// only: build_on_gpu_machine.sh finds its headers on the GPU machine).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "placement.hpp"
#include "run_config.hpp"

namespace pp {

struct PipelineOptions {
  ProgressSource progress = ProgressSource::None;
  ColdCall cold_call = ColdCall::Launch;
  // Where the stages run, and what carries the activations between them.
  hangbench::workload::Placement placement = hangbench::workload::Placement::GpuPerRank;
  ActivationLink link = ActivationLink::Nccl;
  int steps = 3;                                    // pipeline steps; only the first touches a cold module
  std::size_t message_bytes = 1 << 20;              // each schedule / sample-state message
  std::size_t activation_elements = 1 << 20;        // floats per activation tensor
  std::optional<std::size_t> rendezvous_threshold;  // overrides what MPI reports
  double watchdog_s = 0;                            // > 0: take the hang-detected path after this long
  double pre_cold_call_delay_s = 0.2;               // lets the spin / NCCL kernel start before the cold call
};

struct UsageError {
  std::string message;  // one line, "pp_pipeline: reason (see --help)"
};

struct HelpRequested {
  std::string text;
};

std::variant<PipelineOptions, UsageError, HelpRequested> parse_pipeline_options(const std::vector<std::string>& args);

}  // namespace pp
