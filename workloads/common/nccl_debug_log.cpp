#include "nccl_debug_log.hpp"

#include <cstdlib>
#include <fstream>

namespace hangbench::workload {

std::string route_nccl_debug_log(const std::string& trial_dir, int world_rank) {
  const char* level = std::getenv("NCCL_DEBUG");
  const char* file = std::getenv("NCCL_DEBUG_FILE");
  if (level == nullptr || *level == '\0' || trial_dir.empty()) return "";
  if (file != nullptr && *file != '\0') return "";
  // NCCL expands %h and %p in this name; a plain path needs no expansion.
  const std::string path = trial_dir + "/nccl-debug.rank" + std::to_string(world_rank) + ".log";
  setenv("NCCL_DEBUG_FILE", path.c_str(), 1);
  return path;
}

std::set<std::string> nccl_transports(std::istream& log) {
  std::set<std::string> out;
  const std::string marker = " via ";
  for (std::string line; std::getline(log, line);) {
    if (line.find("NCCL INFO") == std::string::npos || line.find("Channel") == std::string::npos) continue;
    const auto at = line.rfind(marker);
    if (at == std::string::npos) continue;
    std::string transport = line.substr(at + marker.size());
    transport = transport.substr(0, transport.find_first_of(" \t\r"));
    if (!transport.empty()) out.insert(transport);
  }
  return out;
}

std::set<std::string> nccl_transports_in_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  return nccl_transports(in);
}

std::string join_transports(const std::set<std::string>& transports) {
  std::string out;
  for (const auto& t : transports) out += (out.empty() ? "" : " ") + t;
  return out.empty() ? "unknown" : out;
}

}  // namespace hangbench::workload
