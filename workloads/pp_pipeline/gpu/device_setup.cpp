#include "device_setup.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include "activation.hpp"
#include "env_or.hpp"
#include "fatal_error.hpp"
#include "phase.hpp"

namespace pp::gpu {

void set_up_device(const PipelineOptions& options, const PipelineStage& stage) {
  int devices = 0;
  cuda_check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < 1) throw FatalError{kExitInfra, "no CUDA device visible"};
  const int local_rank = std::atoi(env_or("OMPI_COMM_WORLD_LOCAL_RANK", "0").c_str());
  const int local_size = std::atoi(env_or("OMPI_COMM_WORLD_LOCAL_SIZE", "1").c_str());
  if (!options.single_gpu && local_size > devices) {
    throw FatalError{kExitUsage, std::to_string(local_size) + " ranks on this node but " + std::to_string(devices) +
                                     " GPU(s): NCCL needs one GPU per rank; use --single-gpu"};
  }
  const int device = options.single_gpu ? 0 : local_rank % devices;
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  // Create the context now: under EAGER this loads every module of the binary.
  cuda_check(cudaFree(nullptr), "creating the CUDA context");
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  stage.log("device " + std::to_string(device) + " (" + prop.name + "), CUDA_MODULE_LOADING=" +
            env_or("CUDA_MODULE_LOADING", "<unset: LAZY>") + ", activations via " + Activation::backend());
  hangbench::phase::metric("cuda_device", std::string(prop.name));
  hangbench::phase::metric("activation_backend", Activation::backend());
}

}  // namespace pp::gpu
