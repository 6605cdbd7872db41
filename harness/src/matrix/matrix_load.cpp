// load_matrix and the small helpers around it: built-in paths, filters, ids.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hangbench/matrix.hpp"
#include "hangbench/paths.hpp"
#include "hangbench/provenance.hpp"
#include "matrix/matrix_spec.hpp"

namespace fs = std::filesystem;

namespace hangbench {

namespace {

// The largest matrix file read: the biggest in the tree is a few kilobytes.
constexpr size_t kMaxMatrixFileBytes = 4 * 1024 * 1024;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string executable_dir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string default_workloads_dir() {
  if (auto v = env_or_empty("HANGBENCH_WORKLOADS_DIR"); !v.empty()) return v;
#ifdef HANGBENCH_BINARY_DIR
  if (fs::is_directory(fs::path(HANGBENCH_BINARY_DIR) / "workloads"))
    return (fs::path(HANGBENCH_BINARY_DIR) / "workloads").string();
#endif
  // An installed or copied build: <build>/harness/hangbench -> <build>/workloads.
  return (fs::path(executable_dir()).parent_path() / "workloads").string();
}

std::string default_matrix_path() {
  fs::path source(source_root());
  fs::path socket = source / "workloads" / "socket_teardown" / "matrix.toml";
  if (fs::exists(socket)) return socket.string();
  return (source / "workloads" / "test_workloads" / "matrix.toml").string();
}

Matrix parse_matrix(std::string_view text, const std::string& path, const MatrixEnvironment& env) {
  auto spec = matrix_detail::parse_matrix_spec(text, path, env.overrides);
  std::string workloads = !env.workloads_dir.empty() ? env.workloads_dir : default_workloads_dir();
  std::string nccl_cache = !env.nccl_cache.empty() ? env.nccl_cache : default_nccl_cache();
  std::error_code ec;
  fs::path matrix_dir = fs::absolute(fs::path(path), ec).parent_path();
  std::map<std::string, std::string> builtins = {
      {"workloads", workloads}, {"nccl_cache", nccl_cache}, {"matrix_dir", matrix_dir.string()}};
  Matrix m = matrix_detail::expand_matrix(spec, builtins);
  // The matrix that runs: the file's text and every --set over it.
  std::string identity(text);
  for (const auto& o : env.overrides) identity += "\n# --set " + o;
  m.sha256 = sha256_hex(identity);
  return m;
}

Matrix load_matrix(const std::string& path, const MatrixEnvironment& env) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(path, 0, "is a folder; --matrix wants a matrix TOML file");
  // A regular file of bounded size, read so: /dev/zero or /dev/urandom would grow
  // without end, and opening a FIFO without O_NONBLOCK waits for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw ConfigError(path, 0, std::string("cannot read the matrix file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ConfigError(path, 0,
                      "is not a regular file (a device, a FIFO or a socket); --matrix wants a matrix TOML file");
  }
  std::string text;
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw ConfigError(path, 0, std::string("cannot read the matrix file: ") + std::strerror(err));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxMatrixFileBytes) {
      ::close(fd);
      throw ConfigError(path, 0,
                        "is larger than " + std::to_string(kMaxMatrixFileBytes / (1024 * 1024)) +
                            " MiB; a matrix file is a few kilobytes of TOML");
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return parse_matrix(text, path, env);
}

namespace {

// "axes: behaviour = pass, exit3, hang; build = 2.17.1, 2.18.1": what a --filter can name.
std::string axes_and_values(const std::vector<Cell>& cells) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& c : cells) {
    for (const auto& [axis, value] : c.params) {
      auto& seen = values[axis];
      if (std::find(seen.begin(), seen.end(), value) == seen.end()) seen.push_back(value);
    }
  }
  std::string out;
  for (const auto& [axis, seen] : values) {
    out += (out.empty() ? "axes: " : "; ") + axis + " =";
    for (size_t i = 0; i < seen.size(); ++i) out += (i ? ", " : " ") + seen[i];
  }
  return out.empty() ? "the matrix has no axes" : out;
}

}  // namespace

void filter_cells(Matrix& matrix, const std::vector<std::pair<std::string, std::string>>& filters) {
  if (filters.empty()) return;
  for (const auto& [axis, value] : filters) {
    bool known = false;
    for (const auto& c : matrix.cells) known = known || c.params.count(axis);
    if (!known)
      throw ConfigError(matrix.path, 0,
                        "--filter names '" + axis + "', which is not an axis (" + axes_and_values(matrix.cells) + ")");
  }
  std::vector<Cell> kept;
  for (auto& c : matrix.cells) {
    bool keep = true;
    for (const auto& [axis, value] : filters) {
      auto it = c.params.find(axis);
      // Several filters on one axis are alternatives; different axes must all match.
      bool axis_ok = false;
      for (const auto& [a2, v2] : filters)
        axis_ok = axis_ok || (a2 == axis && it != c.params.end() && it->second == v2);
      keep = keep && axis_ok;
    }
    if (keep) kept.push_back(std::move(c));
  }
  if (kept.empty()) {
    std::string given;
    for (const auto& [axis, value] : filters) given += (given.empty() ? "" : " ") + axis + "=" + value;
    throw ConfigError(matrix.path, 0,
                      "--filter " + given + " matches no cell; " + axes_and_values(matrix.cells) +
                          " (several values of one axis are alternatives, different axes must all match)");
  }
  matrix.cells = std::move(kept);
}

std::string expand_trial_placeholders(const std::string& text, const std::string& trial_dir, int index) {
  std::string out = text;
  for (const auto& [name, value] : {std::pair<std::string, std::string>{"{trial_dir}", trial_dir},
                                    std::pair<std::string, std::string>{"{trial}", std::to_string(index)}}) {
    for (size_t pos = 0; (pos = out.find(name, pos)) != std::string::npos; pos += value.size()) {
      out.replace(pos, name.size(), value);
    }
  }
  return out;
}

std::string timeout_problem(double seconds) {
  if (!(seconds > 0)) return "must be > 0 seconds";
  if (!(seconds <= kMaxTimeoutS)) {
    return "must be at most " + std::to_string(static_cast<long>(kMaxTimeoutS)) + " seconds (a week)";
  }
  return "";
}

std::string cell_folder_name(const std::string& cell_id) {
  std::string name = sanitize_cell_id(cell_id);
  if (name.size() > 80) name.resize(80);
  return name + "-" + sha256_hex(cell_id).substr(0, 8);
}

std::string sanitize_cell_id(const std::string& cell_id) {
  std::string out;
  for (char c : cell_id) {
    bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '=' || c == '-';
    out += safe ? c : (c == ',' ? '+' : '_');
  }
  if (out.empty() || out == "." || out == "..") out = "cell" + out;
  return out;
}

}  // namespace hangbench
