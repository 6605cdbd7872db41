// Applies the project's NCCL patches with patch(1) (not `git apply`, which
// skips paths silently when run inside another git work tree).
#pragma once

#include <string>
#include <vector>

namespace hangbench::nccl {

// Files a unified diff changes ("src/misc/socket.cc"), from its "+++ b/" lines.
std::vector<std::string> patched_files(const std::string& patch_path);
// True when every file is host code: no CUDA sources, nothing under
// src/collectives/device, no makefiles. Such a patch only needs a relink.
bool host_only(const std::vector<std::string>& files);
// Dry run first, then `patch -p1 --fuzz=0`; throws UsageError with patch's
// output when the patch does not apply cleanly to `tree`.
void apply_patch(const std::string& tree, const std::string& patch_path);
// True when `patch -R --dry-run` succeeds: the patch is already in `tree`.
bool patch_is_applied(const std::string& tree, const std::string& patch_path);

}  // namespace hangbench::nccl
