#include "nccl/patching.hpp"

#include <fmt/format.h>

#include <fstream>

#include "hangbench/nccl_build.hpp"
#include "nccl/process.hpp"

namespace hangbench::nccl {
namespace {

std::vector<std::string> patch_command(const std::string& tree, const std::string& patch_path) {
  return {"patch", "-p1", "--batch", "--forward", "--fuzz=0", "--no-backup-if-mismatch", "-d", tree, "-i", patch_path};
}

}  // namespace

std::vector<std::string> patched_files(const std::string& patch_path) {
  std::ifstream in(patch_path);
  if (!in) throw UsageError("cannot read patch " + patch_path);
  std::vector<std::string> files;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("+++ ", 0) != 0) continue;
    std::string path = line.substr(4);
    if (auto tab = path.find('\t'); tab != std::string::npos) path.resize(tab);
    if (path.rfind("b/", 0) == 0) path.erase(0, 2);
    files.push_back(path);
  }
  if (files.empty()) throw UsageError(patch_path + ": not a unified diff (no '+++ ' lines)");
  return files;
}

bool host_only(const std::vector<std::string>& files) {
  for (const std::string& f : files) {
    const bool device_dir = f.find("collectives/device/") != std::string::npos;
    const bool cuda_source = f.ends_with(".cu") || f.ends_with(".cuh");
    const bool build_file = f.find("Makefile") != std::string::npos || f.ends_with(".mk");
    if (device_dir || cuda_source || build_file) return false;
  }
  return true;
}

void apply_patch(const std::string& tree, const std::string& patch_path) {
  auto dry_run = patch_command(tree, patch_path);
  dry_run.push_back("--dry-run");
  ProcessResult check = run_process(dry_run);
  if (check.exit_status != 0)
    throw UsageError(fmt::format("patch {} does not apply cleanly to {}:\n{}", patch_path, tree, check.output));
  ProcessResult applied = run_process(patch_command(tree, patch_path));
  if (applied.exit_status != 0)
    throw std::runtime_error(fmt::format("patch {} failed on {}:\n{}", patch_path, tree, applied.output));
}

bool patch_is_applied(const std::string& tree, const std::string& patch_path) {
  auto reverse = patch_command(tree, patch_path);
  reverse.insert(reverse.end(), {"-R", "--dry-run"});
  return run_process(reverse).exit_status == 0;
}

}  // namespace hangbench::nccl
