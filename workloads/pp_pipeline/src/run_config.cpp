#include "run_config.hpp"

#include <cstring>

namespace pp {

std::string to_string(ProgressSource p) {
  switch (p) {
    case ProgressSource::None:
      return "none";
    case ProgressSource::Pump:
      return "pump";
    case ProgressSource::Native:
      return "native";
  }
  return "unknown";
}

std::string to_string(ModuleLoading m) { return m == ModuleLoading::Lazy ? "LAZY" : "EAGER"; }

std::string to_string(ColdCall c) { return c == ColdCall::Launch ? "launch" : "module-load"; }

std::string to_string(ActivationLink l) { return l == ActivationLink::Nccl ? "nccl" : "host-page"; }

std::optional<ActivationLink> activation_link_from_string(const std::string& s) {
  if (s == "nccl") return ActivationLink::Nccl;
  if (s == "host-page") return ActivationLink::HostPage;
  return std::nullopt;
}

std::optional<ProgressSource> progress_source_from_string(const std::string& s) {
  if (s == "none") return ProgressSource::None;
  if (s == "pump") return ProgressSource::Pump;
  if (s == "native") return ProgressSource::Native;
  return std::nullopt;
}

std::optional<ColdCall> cold_call_from_string(const std::string& s) {
  if (s == "launch") return ColdCall::Launch;
  if (s == "module-load") return ColdCall::ModuleLoad;
  return std::nullopt;
}

ModuleLoading module_loading_from_env(const char* value) {
  return value != nullptr && std::strcmp(value, "EAGER") == 0 ? ModuleLoading::Eager : ModuleLoading::Lazy;
}

}  // namespace pp
