// Collects the provenance header of a run: tool, host, kernel, GPU, matrix,
// library hashes and the environment variables that change behaviour.
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "hangbench/provenance.hpp"

extern char** environ;

namespace hangbench {
namespace {

// First line of `nvidia-smi --query-gpu=name,driver_version`, or "" without a GPU.
std::string query_gpu() {
  FILE* pipe = ::popen("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null", "r");
  if (!pipe) return "";
  std::array<char, 512> line{};
  std::string out;
  if (std::fgets(line.data(), line.size(), pipe)) out = line.data();
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool is_relevant_env_var(std::string_view name) {
  for (std::string_view prefix : {"NCCL_", "CUDA_", "UCX_", "OMPI_", "TORCH_", "HANGBENCH_"}) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return name == "LD_PRELOAD" || name == "LD_LIBRARY_PATH";
}

Provenance collect_provenance(const Matrix& matrix) {
  Provenance p;
  p.hangbench_version = HANGBENCH_VERSION;
  p.hangbench_commit = git_commit();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) p.host = host;
  utsname u{};
  if (::uname(&u) == 0) p.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::string gpu = query_gpu();
  if (auto comma = gpu.rfind(','); comma != std::string::npos) {
    p.gpu = trim(gpu.substr(0, comma));
    p.driver = trim(gpu.substr(comma + 1));
  }
  p.started_at = utc_now_iso8601();
  p.matrix_path = matrix.path;
  p.matrix_sha256 = matrix.sha256;
  for (const auto& cell : matrix.cells) {
    for (const auto& file : cell.hash_files) {
      if (p.library_hashes.count(file)) continue;
      std::string digest = sha256_file(file);
      p.library_hashes[file] = digest.empty() ? "unreadable" : digest;
    }
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    if (is_relevant_env_var(entry.substr(0, eq))) p.environment[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  return p;
}

}  // namespace hangbench
