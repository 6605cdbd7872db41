// The training job itself: a small MLP and Adam on synthetic regression data,
// gradients averaged across ranks through the Communicator (what DDP does).
#pragma once

#include <torch/torch.h>

#include "communicator.hpp"
#include "loader_workers.hpp"

namespace hangbench::ddp {

struct AllReduceCheck {
  bool correct = false;
  double max_abs_error = 0;
  double expected = 0;
};

class Trainer {
 public:
  Trainer(const Options& options, const World& world, torch::Device device, Communicator& communicator,
          const loader::BatchShape& shape);

  // One step on one batch; returns the local loss before the update.
  float step(const loader::Batch& batch);
  // All-reduces (rank + 1) everywhere and compares with size*(size+1)/2.
  AllReduceCheck check_all_reduce();
  // A parameter-sized CUDA tensor, for the collective left to time out.
  torch::Tensor gradient_sized_buffer() const;

 private:
  void average_gradients();

  World world_;
  torch::Device device_;
  Communicator& communicator_;
  loader::BatchShape shape_;
  torch::nn::Sequential model_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

}  // namespace hangbench::ddp
