// One stage's activation tensor on its GPU. With PP_PIPELINE_WITH_TORCH it is a
// libtorch CUDA tensor (what a PP runtime passes to NCCL); without, a plain
// cudaMalloc buffer, so the workload also builds where libtorch is absent.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace pp::gpu {

class Activation {
 public:
  // `elements` floats on the current device, filled with `initial`.
  Activation(std::size_t elements, float initial);
  ~Activation();
  Activation(const Activation&) = delete;
  Activation& operator=(const Activation&) = delete;

  float* data();
  std::size_t elements() const { return elements_; }
  static std::string backend();  // "libtorch <version>" or "cudaMalloc"

 private:
  struct Storage;
  std::unique_ptr<Storage> storage_;
  std::size_t elements_;
};

}  // namespace pp::gpu
