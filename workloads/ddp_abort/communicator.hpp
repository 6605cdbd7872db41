// What the trainer needs from a communication backend: one interface, two
// implementations (direct_backend.cpp: dlopen'd NCCL; c10d_backend.cpp:
// PyTorch's ProcessGroupNCCL).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "options.hpp"

namespace hangbench::ddp {

// How a teardown went; the durations become the trial's metrics.
struct TeardownReport {
  double seconds = 0;                  // the abort or destroy call itself
  double watchdog_fired_after_s = -1;  // watchdog: stall start -> abort decision
  bool gate_opened_by_safety = false;
  std::string detail;  // one line for the log
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  // Creates the NCCL communicator on `device` (a cuda:N device) and returns when
  // it is usable (init_done).
  virtual void init(const World& world, const torch::Device& device) = 0;
  // Sums a contiguous float32 CUDA tensor across ranks, in place, ordered on the
  // current stream.
  virtual void all_reduce_sum(torch::Tensor& tensor) = 0;

  // The three teardowns. Each returns when the communicator is gone; a hung
  // NCCL teardown keeps it from returning (that is the measurement).
  virtual TeardownReport abort_by_watchdog(torch::Tensor& tensor, double timeout_s) = 0;
  virtual TeardownReport abort_at_exit() = 0;
  virtual TeardownReport destroy() = 0;

  // The NCCL actually executing the calls: version and file.
  virtual std::string nccl_version() const = 0;
  virtual std::string nccl_path() const = 0;
};

std::unique_ptr<Communicator> make_direct_communicator(const Options& options);
std::unique_ptr<Communicator> make_c10d_communicator(const Options& options);

}  // namespace hangbench::ddp
