// `sweep --hang ID`: a catalog entry's reproducer swept instead of the teardown check.
#include <filesystem>

#include "hangbench/catalog.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::sweep {
namespace {

namespace fs = std::filesystem;

// The folder above lib/ of the swept library of `release`: a wheel in the NCCL cache
// (vendor/nvidia-nccl-cu12-2.16.5-<key>/) or a bundle's <release>/ folder.
std::string wheel_reference(const Request& r, const std::string& id, const std::string& release) {
  for (const auto& lib : r.libraries) {
    const fs::path folder = fs::absolute(lib).parent_path().parent_path();
    const std::string name = folder.filename().string();
    if (name == release || name.find("-" + release + "-") != std::string::npos) return folder.string();
  }
  throw ConfigError("catalog/" + id + ".toml", 0,
                    "its reference wheel " + release +
                        " is not among the libraries swept: add it (hangbench nccl fetch " + release + ")");
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
  d.vulnerable_variant = reference(request, id, p.vulnerable_reference);
  d.fixed_variant = reference(request, id, p.fixed_reference);
  request.hang = id;
}

}  // namespace hangbench::sweep
