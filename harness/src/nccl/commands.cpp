#include "nccl/commands.hpp"

#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "hangbench/model.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "hangbench/provenance.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {
namespace {

// Usage and verification problems exit 2, everything else that fails 3.
int guarded(const std::function<int()>& body, std::ostream& err) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {  // UsageError included
    err << "hangbench nccl: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const std::exception& e) {
    err << "hangbench nccl: " << e.what() << "\n";
    return exit_code::kInfra;
  }
}

void print_inspection(const InspectResult& r, std::ostream& out) {
  out << r.path << "\n"
      << fmt::format("  version               {}{}\n", r.version.empty() ? "unknown" : r.version,
                     r.loaded ? " (ncclGetVersion through dlopen)" : r.version.empty() ? "" : " (version string)")
      << fmt::format("  sha256                {}\n", r.sha256)
      << fmt::format("  imports shutdown      {}\n", r.imports_shutdown ? "yes" : "no")
      << fmt::format("  ncclSocketClose       {}\n", r.has_symbols ? "found" : "not found (no symbols)")
      << fmt::format("  ...calls shutdown     {}\n", r.socket_close_calls_shutdown == 1   ? "yes"
                                                     : r.socket_close_calls_shutdown == 0 ? "no"
                                                                                           : "cannot tell")
      << fmt::format("  teardown fix present  {}\n", to_string(r.fix)) << "  reasons:\n";
  for (const std::string& reason : r.reasons) out << "    - " << reason << "\n";
}

}  // namespace

int inspect_command(const std::vector<std::string>& libraries, bool json, bool try_dlopen, std::ostream& out,
                    std::ostream& err, bool require_fix) {
  int worst = exit_code::kOk;
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& library : libraries) {
    const int rc = guarded(
        [&] {
          InspectResult r = inspect(library, try_dlopen);
          if (json) all.push_back(to_json(r));
          else print_inspection(r, out);
          if (!require_fix || r.fix == FixVerdict::Yes) return exit_code::kOk;
          err << "hangbench nccl inspect: " << library
              << (r.fix == FixVerdict::No ? ": the teardown fix is absent\n" : ": cannot tell whether the teardown fix is present\n");
          return r.fix == FixVerdict::No ? exit_code::kContradicted : exit_code::kInfra;
        },
        err);
    // A usage error (2) outranks a verdict (1), and an inconclusive library (3) outranks both.
    if (rc == exit_code::kInfra || (worst != exit_code::kInfra && rc > worst)) worst = rc;
  }
  if (json) {
    nlohmann::ordered_json doc{{"schema", "hangbench.nccl-inspect/1"},
                               {"provenance", provenance_json(collect_host_provenance(libraries))},
                               {"libraries", all}};
    out << doc.dump(2) << "\n";
  }
  return worst;
}

int build_command(const BuildOptions& options, const std::string& recipe_dir, bool json, std::ostream& out,
                  std::ostream& err) {
  return guarded(
      [&] {
        const Recipe recipe = recipe_dir.empty()
                                  ? load_default_recipe()
                                  : load_recipe(recipe_dir + "/pins.toml", recipe_dir + "/variants.toml",
                                                fs::path(recipe_dir).parent_path().parent_path().string());
        const auto built = build_variants(recipe, options, [&](const std::string& line) {
          err << "[nccl build] " << line << "\n" << std::flush;
        });
        nlohmann::json summary = nlohmann::json::array();
        for (const BuiltVariant& b : built) {
          summary.push_back({{"variant", b.name}, {"library", b.library}, {"cache_key", b.cache_key},
                             {"how", b.how}, {"seconds", b.seconds}, {"recompiled", b.recompiled.size()}});
          if (!json) out << fmt::format("{:<20} {:<26} {}\n", b.name, b.how, b.library);
        }
        if (json) out << summary.dump(2) << "\n";
        return exit_code::kOk;
      },
      err);
}

int list_command(const std::string& cache_dir, bool json, std::ostream& out, std::ostream& err) {
  return guarded(
      [&] {
        const auto manifests = list_built(cache_dir.empty() ? default_cache_dir() : cache_dir);
        if (json) out << nlohmann::json(manifests).dump(2) << "\n";
        else out << format_built_table(manifests);
        return exit_code::kOk;
      },
      err);
}

int shim_command(const std::string& torch_lib, const std::string& nccl_lib, const std::string& output,
                 int error_code, std::ostream& out, std::ostream& err) {
  return guarded(
      [&] {
        if (error_code <= 0 || error_code > 7) throw UsageError("--error-code must be an ncclResult_t from 1 to 7");
        const auto missing = build_compat_shim(torch_lib, nccl_lib, output, error_code);
        out << fmt::format("{}: {} missing entry point(s){}{}\n", output, missing.size(),
                           missing.empty() ? "" : ": ", fmt::join(missing, " "));
        return exit_code::kOk;
      },
      err);
}

}  // namespace hangbench::nccl
