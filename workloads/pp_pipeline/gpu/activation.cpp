#include "activation.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#ifdef PP_PIPELINE_WITH_TORCH
#include <torch/torch.h>
#include <torch/version.h>
#endif

namespace pp::gpu {

#ifdef PP_PIPELINE_WITH_TORCH
struct Activation::Storage {
  torch::Tensor tensor;
};

Activation::Activation(std::size_t elements, float initial)
    : storage_(std::make_unique<Storage>()), elements_(elements) {
  int device = 0;
  cudaGetDevice(&device);
  storage_->tensor = torch::full({static_cast<int64_t>(elements)}, initial,
                                 torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, device));
  // Finish torch's own kernels now: their modules load here, not during the cycle.
  torch::cuda::synchronize(device);
}

Activation::~Activation() = default;
float* Activation::data() { return storage_->tensor.data_ptr<float>(); }
std::string Activation::backend() { return std::string("libtorch ") + TORCH_VERSION; }
#else
struct Activation::Storage {
  float* device = nullptr;
  ~Storage() {
    if (device != nullptr) cudaFree(device);
  }
};

Activation::Activation(std::size_t elements, float initial)
    : storage_(std::make_unique<Storage>()), elements_(elements) {
  if (cudaMalloc(&storage_->device, elements * sizeof(float)) != cudaSuccess) {
    throw std::runtime_error("cudaMalloc of " + std::to_string(elements * sizeof(float)) +
                             " B for an activation failed");
  }
  // A host copy, not a fill kernel: no module is loaded on its account.
  std::vector<float> host(elements, initial);
  if (cudaMemcpy(storage_->device, host.data(), elements * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
    throw std::runtime_error("cudaMemcpy into an activation failed");
  }
}

Activation::~Activation() = default;
float* Activation::data() { return storage_->device; }
std::string Activation::backend() { return "cudaMalloc"; }
#endif

}  // namespace pp::gpu
