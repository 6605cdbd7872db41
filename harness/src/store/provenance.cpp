// Collects the provenance header of a command: argv, tool, host, kernel, GPU,
// driver, CUDA, matrix, library hashes and the environment variables that change
// behaviour.
#include "hangbench/provenance.hpp"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <sstream>

#include "hangbench/clock.hpp"

extern char** environ;

namespace hangbench {
namespace {

// Everything a shell command prints, "" when it cannot run.
std::string command_output(const char* command) {
  FILE* pipe = ::popen(command, "r");
  if (!pipe) return "";
  std::array<char, 512> chunk{};
  std::string out;
  while (std::fgets(chunk.data(), chunk.size(), pipe)) out += chunk.data();
  ::pclose(pipe);
  return out;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// First line of `nvidia-smi --query-gpu=name,driver_version`, or "" without a GPU.
std::string query_gpu() {
  std::string out =
      first_line(command_output("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null"));
  while (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

// The "CUDA Version: 13.0" of nvidia-smi's banner: the CUDA the driver supports.
std::string query_cuda_version() {
  std::string banner = command_output("nvidia-smi 2>/dev/null");
  const std::string key = "CUDA Version:";
  size_t at = banner.find(key);
  if (at == std::string::npos) return "";
  size_t begin = banner.find_first_not_of(' ', at + key.size());
  if (begin == std::string::npos) return "";
  size_t end = banner.find_first_not_of("0123456789.", begin);
  return banner.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

struct GpuFacts {
  std::string gpu, driver, cuda;
};

// The driver's own files: the kernel module's version and each GPU's model, read
// in microseconds (nvidia-smi takes up to seconds on a GPU machine; diagnose must
// answer in one). Empty without an NVIDIA driver.
}  // namespace

NvidiaDriverFacts read_nvidia_driver_facts(const std::string& root) {
  NvidiaDriverFacts f;
  std::ifstream version(root + "/version");
  std::string line;
  if (std::getline(version, line)) {
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) {
        f.driver =
            word;  // "580.159.04" in "NVRM version: NVIDIA UNIX ... Kernel Module  580.159.04  Release Build ..."
        break;
      }
    }
  }
  std::error_code ec;
  std::vector<std::string> gpus;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/gpus", ec)) gpus.push_back(entry.path());
  std::sort(gpus.begin(), gpus.end());
  if (!gpus.empty()) {
    std::ifstream information(gpus.front() + "/information");
    while (std::getline(information, line)) {
      if (line.rfind("Model:", 0) == 0) f.gpu = trim(line.substr(6));
    }
  }
  return f;
}

namespace {

// The CUDA version the driver supports, as nvidia-smi's banner says it ("13.0"),
// from the driver library itself; "" without one.
std::string cuda_version_from_driver() {
  void* cuda = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!cuda) return "";
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(::dlsym(cuda, "cuDriverGetVersion"));
  int version = 0;
  std::string out;
  if (get && get(&version) == 0 && version > 0)
    out = std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  ::dlclose(cuda);
  return out;
}

// Once per process, started as early as a command asks: the driver's files and
// library; nvidia-smi only where those are not readable (both queries at once).
std::shared_future<GpuFacts> gpu_facts() {
  static std::shared_future<GpuFacts> facts = std::async(std::launch::async, [] {
                                                GpuFacts f;
                                                const NvidiaDriverFacts proc =
                                                    read_nvidia_driver_facts("/proc/driver/nvidia");
                                                if (!proc.gpu.empty() && !proc.driver.empty()) {
                                                  f.gpu = proc.gpu;
                                                  f.driver = proc.driver;
                                                  f.cuda = cuda_version_from_driver();
                                                  return f;
                                                }
                                                auto cuda = std::async(std::launch::async, query_cuda_version);
                                                std::string gpu = query_gpu();
                                                std::string version = cuda.get();
                                                f = GpuFacts{};
                                                if (auto comma = gpu.rfind(','); comma != std::string::npos) {
                                                  f.gpu = trim(gpu.substr(0, comma));
                                                  f.driver = trim(gpu.substr(comma + 1));
                                                  f.cuda = version;
                                                }
                                                return f;
                                              }).share();
  return facts;
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

std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\0', start);
    if (end == std::string::npos) end = bytes.size();
    argv.push_back(bytes.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

void prefetch_host_provenance() { gpu_facts(); }

Provenance collect_host_provenance(const std::vector<std::string>& libraries) {
  Provenance p;
  p.hangbench_version = HANGBENCH_VERSION;
  p.hangbench_commit = git_commit();
  p.argv = command_line();
  p.host = host_name();
  utsname u{};
  if (::uname(&u) == 0) p.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  const GpuFacts& gpu = gpu_facts().get();
  p.gpu = gpu.gpu;
  p.driver = gpu.driver;
  p.cuda = gpu.cuda;
  p.started_at = utc_now_iso8601();
  for (const auto& file : libraries) {
    if (p.library_hashes.count(file)) continue;
    std::string digest = sha256_file(file);
    p.library_hashes[file] = digest.empty() ? "unreadable" : digest;
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    if (is_relevant_env_var(entry.substr(0, eq)))
      p.environment[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  return p;
}

Provenance collect_provenance(const Matrix& matrix) {
  std::vector<std::string> libraries;
  for (const auto& cell : matrix.cells)
    libraries.insert(libraries.end(), cell.hash_files.begin(), cell.hash_files.end());
  Provenance p = collect_host_provenance(libraries);
  p.matrix_path = matrix.path;
  p.matrix_sha256 = matrix.sha256;
  return p;
}

nlohmann::ordered_json provenance_json(const Provenance& p) {
  nlohmann::ordered_json j = p;  // the model's one form, its keys in order
  return j;
}

}  // namespace hangbench
