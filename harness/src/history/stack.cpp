// What a cell ran over (NCCL library, driver, libtorch) and how (its matrix, its
// options, its phase deadlines), read from the run's provenance and the cell, and
// which of them changed between two nights.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "hangbench/history.hpp"

namespace hangbench::history {
namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool file_name_contains(const std::string& path, const std::string& word) {
  return lowercase(std::filesystem::path(path).filename().string()).find(word) != std::string::npos;
}

void append_part(std::string& out, const std::string& part) {
  if (part.empty()) return;
  if (!out.empty()) out += ";";
  out += part;
}

}  // namespace

Stack stack_of(const Cell& cell, const Provenance& provenance) {
  Stack stack;
  stack.driver = provenance.driver;
  // The cell's own hashed files: a matrix with several NCCL builds gives each
  // cell the hash of its build, so a rebuild of one variant marks only its cells.
  for (const std::string& file : cell.hash_files) {
    auto hash = provenance.library_hashes.find(file);
    if (hash == provenance.library_hashes.end()) continue;
    if (file_name_contains(file, "nccl")) append_part(stack.nccl, hash->second);
    if (file_name_contains(file, "libtorch")) append_part(stack.torch, hash->second);
  }
  // libtorch is rarely hashed; its version in the environment (e.g. the
  // HANGBENCH_TORCH_VERSION that ci/nightly.sh exports) identifies it too.
  for (const auto& [name, value] : provenance.environment) {
    if (name.find("TORCH_VERSION") != std::string::npos) append_part(stack.torch, name + "=" + value);
  }
  // How the cell was run: a night with other --trials, --timeout, --set or a
  // changed matrix file is not the same experiment as the night before.
  stack.matrix = provenance.matrix_sha256;
  nlohmann::json options{
      {"trials", cell.trials},
      {"timeout_s", cell.timeout_s},
      {"argv", cell.argv},
      {"env", cell.env},
      {"launcher", {static_cast<int>(cell.launcher.kind), cell.launcher.ranks, cell.launcher.extra_args}},
      {"expect", static_cast<int>(cell.expect)}};
  stack.options = options.dump();
  stack.phase_timeouts = cell.phase_timeouts_s.empty() ? "none" : nlohmann::json(cell.phase_timeouts_s).dump();
  return stack;
}

std::vector<std::string> stack_changes(const Stack& before, const Stack& after) {
  std::vector<std::string> changed;
  auto differs = [](const std::string& a, const std::string& b) { return !a.empty() && !b.empty() && a != b; };
  if (differs(before.nccl, after.nccl)) changed.push_back("nccl");
  if (differs(before.driver, after.driver)) changed.push_back("driver");
  if (differs(before.torch, after.torch)) changed.push_back("libtorch");
  if (differs(before.matrix, after.matrix)) changed.push_back("matrix");
  if (differs(before.options, after.options)) changed.push_back("options");
  if (differs(before.phase_timeouts, after.phase_timeouts)) changed.push_back("phase timeouts");
  return changed;
}

}  // namespace hangbench::history
