// The axes of the PP workload and how they are spelled on the command line.
#pragma once

#include <optional>
#include <string>

namespace pp {

// Which thread, if any, re-enters MPI while the executor is busy.
enum class ProgressSource {
  None,    // nobody: the send progresses only when the executor calls MPI again
  Pump,    // a Python thread calling MPI_Iprobe: needs the GIL before each probe
  Native,  // a C++ thread calling MPI_Iprobe: never touches Python
};

// CUDA_MODULE_LOADING as the process saw it at start.
enum class ModuleLoading { Lazy, Eager };

// How the executor first touches code that is not loaded yet.
enum class ColdCall {
  Launch,      // first launch of a kernel from its own translation unit (own module)
  ModuleLoad,  // cuModuleLoadData of an embedded fatbin + launch, as JIT kernel libraries do
};

// What carries a stage's activation to the next stage.
enum class ActivationLink {
  Nccl,      // ncclSend / ncclRecv (NET/Socket between ranks sharing one GPU, each its own NCCL host)
  HostPage,  // a spin kernel released through a shared host page: the stand-in where NCCL cannot run
};

std::string to_string(ProgressSource p);
std::string to_string(ActivationLink l);
std::optional<ActivationLink> activation_link_from_string(const std::string& s);
std::string to_string(ModuleLoading m);
std::string to_string(ColdCall c);
std::optional<ProgressSource> progress_source_from_string(const std::string& s);
std::optional<ColdCall> cold_call_from_string(const std::string& s);

// CUDA's rule: unset or anything but "EAGER" means lazy (the default since CUDA 12.2).
ModuleLoading module_loading_from_env(const char* value);

}  // namespace pp
