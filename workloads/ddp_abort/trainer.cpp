#include "trainer.hpp"

namespace hangbench::ddp {

Trainer::Trainer(const Options& options, const World& world, torch::Device device, Communicator& communicator,
                 const loader::BatchShape& shape)
    : world_(world), device_(device), communicator_(communicator), shape_(shape) {
  // The same seed on every rank gives the same initial weights (DDP broadcasts them).
  torch::manual_seed(42);
  model_ = torch::nn::Sequential(torch::nn::Linear(shape.in_features, options.hidden), torch::nn::ReLU(),
                                 torch::nn::Linear(options.hidden, options.hidden), torch::nn::ReLU(),
                                 torch::nn::Linear(options.hidden, shape.out_features));
  model_->to(device_);
  optimizer_ = std::make_unique<torch::optim::Adam>(model_->parameters(), torch::optim::AdamOptions(1e-3));
}

float Trainer::step(const loader::Batch& batch) {
  auto cpu = torch::TensorOptions().dtype(torch::kFloat32);
  // from_blob does not own the memory; clone before the batch goes away.
  torch::Tensor inputs =
      torch::from_blob(const_cast<float*>(batch.inputs.data()), {shape_.batch_size, shape_.in_features}, cpu)
          .to(device_);
  torch::Tensor targets =
      torch::from_blob(const_cast<float*>(batch.targets.data()), {shape_.batch_size, shape_.out_features}, cpu)
          .to(device_);
  optimizer_->zero_grad();
  torch::Tensor loss = torch::mse_loss(model_->forward(inputs), targets);
  loss.backward();
  average_gradients();
  optimizer_->step();
  return loss.item<float>();
}

void Trainer::average_gradients() {
  std::vector<torch::Tensor> grads;
  for (const auto& p : model_->parameters()) grads.push_back(p.grad().view(-1));
  torch::Tensor flat = torch::cat(grads).contiguous();  // one bucket, like DDP's
  communicator_.all_reduce_sum(flat);
  flat.div_(static_cast<double>(world_.size));
  int64_t offset = 0;
  for (const auto& p : model_->parameters()) {
    const int64_t n = p.numel();
    p.grad().view(-1).copy_(flat.narrow(0, offset, n));
    offset += n;
  }
}

AllReduceCheck Trainer::check_all_reduce() {
  AllReduceCheck check;
  check.expected = world_.size * (world_.size + 1) / 2.0;
  torch::Tensor t = torch::full({4096}, static_cast<float>(world_.rank + 1),
                                torch::TensorOptions().device(device_).dtype(torch::kFloat32));
  communicator_.all_reduce_sum(t);
  check.max_abs_error = (t - check.expected).abs().max().item<double>();  // waits for the result
  check.correct = check.max_abs_error == 0.0;
  return check;
}

torch::Tensor Trainer::gradient_sized_buffer() const {
  int64_t n = 0;
  for (const auto& p : model_->parameters()) n += p.numel();
  return torch::zeros({n}, torch::TensorOptions().device(device_).dtype(torch::kFloat32));
}

}  // namespace hangbench::ddp
