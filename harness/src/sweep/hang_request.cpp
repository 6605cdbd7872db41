// `sweep --hang ID`: a catalog entry's reproducer swept instead of the teardown check.
#include <algorithm>
#include <filesystem>

#include "hangbench/catalog.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "hangbench/paths.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::sweep {
namespace {

namespace fs = std::filesystem;

// The folder above lib/ of the swept library of `release`: a wheel in the NCCL cache
// (vendor/nvidia-nccl-cu12-2.16.5-<key>/) or a bundle's <release>/ folder.
bool names_release(const std::string& folder_name, const std::string& release) {
  return folder_name == release || folder_name.find("-" + release + "-") != std::string::npos;
}

// A wheel of `release` in the NCCL cache (vendor/nvidia-nccl-cuXX-<release>-<key>/; a
// pinned build named like a release is no wheel): how `validate --hang` finds references.
std::string cached_wheel(const Request& r, const std::string& release) {
  const fs::path cache = r.design.reference_dir.empty() ? default_nccl_cache() : r.design.reference_dir;
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& d : fs::directory_iterator(cache / "vendor", ec))
    if (names_release(d.path().filename().string(), release) && fs::exists(d.path() / "lib" / "libnccl.so.2", ec))
      found.push_back(d.path().string());
  std::sort(found.begin(), found.end());  // the same one every time
  return found.empty() ? "" : found.front();
}

// Whether the library has code this GPU can load; unreadable counts as "may run".
bool may_run_on_sm90(const std::string& lib) {
  try {
    return nccl::inspect(lib, /*try_dlopen=*/false).runs_on_sm90.runs != nccl::RunsOn::No;
  } catch (const std::exception&) {
    return true;
  }
}

std::string wheel_reference(const Request& r, const std::string& id, const std::string& release) {
  // Several swept builds of the release (cu11, cu12, cu13): the first whose code runs on
  // sm_90. NVIDIA's cu11 builds of 2.16 to 2.21 have none, and a reference that cannot
  // start judges nothing.
  std::vector<std::pair<std::string, std::string>> matches;  // folder, library
  for (const auto& lib : r.libraries) {
    const fs::path folder = fs::absolute(lib).parent_path().parent_path();
    if (names_release(folder.filename().string(), release)) matches.emplace_back(folder.string(), lib);
  }
  if (matches.size() > 1) {
    for (const auto& [folder, lib] : matches)
      if (may_run_on_sm90(lib)) return folder;
  }
  if (!matches.empty()) return matches.front().first;
  if (std::string cached = cached_wheel(r, release); !cached.empty()) return cached;
  throw ConfigError("catalog/" + id + ".toml", 0,
                    "its reference wheel " + release +
                        " is neither among the libraries swept nor in the NCCL cache: hangbench nccl fetch " + release);
}

std::string reference(const Request& r, const std::string& id, const std::string& named) {
  const std::string prefix = "wheel:";
  return named.rfind(prefix, 0) == 0 ? wheel_reference(r, id, named.substr(prefix.size())) : named;
}

}  // namespace

void apply_hang(Request& request, const std::string& id) {
  const catalog::Entry* e = catalog::find(id);
  if (!e) {
    std::string known;
    for (const auto& entry : catalog::entries()) known += (known.empty() ? "" : ", ") + entry.id;
    throw UsageError("no catalog entry '" + id + "' (known: " + known + ")");
  }
  const catalog::Reproducer& p = e->reproducer;
  if (!p.sweepable())
    throw ConfigError(e->file, 0,
                      "entry " + id +
                          " has no reproducer a sweep can run (workload, vulnerable_reference and "
                          "fixed_reference); its matrix is " +
                          (p.matrix.empty() ? "none" : p.matrix));
  validate::Request& d = request.design;
  if (d.workload.empty()) d.workload = (fs::path(default_workloads_dir()) / p.workload / p.workload).string();
  d.workload_args = p.args;
  if (!p.phase.empty()) d.teardown_phase = p.phase;
  // The entry's own deadline after its phase (what its matrix measured with), unless the
  // command line gave one: aborts after a peer died take longer than the sweep's 8 s.
  if (p.phase_timeout_s > 0 && d.teardown_timeout_s <= 0) d.teardown_timeout_s = p.phase_timeout_s;
  d.vulnerable_variant = reference(request, id, p.vulnerable_reference);
  d.fixed_variant = reference(request, id, p.fixed_reference);
  request.hang = id;
}

std::vector<std::string> expand_hang_ids(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  auto add = [&](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const auto& id : ids) {
    if (id != "all") {
      add(id);
      continue;
    }
    for (const auto& e : catalog::entries())
      if (e.reproducer.sweepable()) add(e.id);
  }
  return out;
}

}  // namespace hangbench::sweep
