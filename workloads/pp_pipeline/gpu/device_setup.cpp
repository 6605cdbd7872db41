#include "device_setup.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include "activation.hpp"
#include "env_or.hpp"
#include "fatal_error.hpp"
#include "phase.hpp"
#include "placement.hpp"

namespace pp::gpu {

void set_up_device(const PipelineOptions& options, const PipelineStage& stage) {
  int devices = 0;
  cuda_check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < 1) throw FatalError{kExitInfra, "no CUDA device visible"};
  const int local_rank = std::atoi(env_or("OMPI_COMM_WORLD_LOCAL_RANK", "0").c_str());
  const int local_size = std::atoi(env_or("OMPI_COMM_WORLD_LOCAL_SIZE", "1").c_str());
  const auto choice = hangbench::workload::device_for_rank(options.placement, local_rank, local_size, devices);
  if (choice.device < 0) throw FatalError{kExitUsage, choice.error};
  const int device = choice.device;
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  // Create the context now: under EAGER this loads every module of the binary.
  cuda_check(cudaFree(nullptr), "creating the CUDA context");
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  stage.log("device " + std::to_string(device) + " (" + prop.name + "), CUDA_MODULE_LOADING=" +
            env_or("CUDA_MODULE_LOADING", "<unset: LAZY>") + ", activations via " + Activation::backend());
  hangbench::phase::metric("cuda_device", std::string(prop.name));
  hangbench::phase::metric("activation_backend", Activation::backend());
  hangbench::phase::metric("placement", hangbench::workload::to_string(options.placement));
}

}  // namespace pp::gpu
