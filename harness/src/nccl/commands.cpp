#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "hangbench/errors.hpp"
#include "hangbench/exit_codes.hpp"
#include "hangbench/nccl_commands.hpp"
#include "hangbench/nccl_fatbin.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "hangbench/nccl_vendor.hpp"
#include "hangbench/provenance.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {
namespace {

std::string archs(const std::vector<uint32_t>& list, const char* prefix) {
  if (list.empty()) return "none";
  std::string text;
  for (uint32_t a : list) text += fmt::format("{}{}{}", text.empty() ? "" : " ", prefix, a);
  return text;
}

void print_fatbin(const FatbinSummary& f, std::ostream& out) {
  out << fmt::format("  .nv_fatbin SASS        {}\n", f.fatbin.present ? archs(f.sass_archs, "sm_") : "no section")
      << fmt::format("  .nv_fatbin PTX         {}\n", f.fatbin.present ? archs(f.ptx_archs, "compute_") : "no section")
      << fmt::format("  __nv_relfatbin PTX     {}\n",
                     f.relfatbin.present ? archs(f.relfatbin_ptx_archs, "compute_") : "no section");
  if (f.zeroed_entries > 0)
    out << fmt::format("  zeroed fatbin entries  {} (slimmed for transport)\n", f.zeroed_entries);
}

// "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0".
std::string cuda_release(const std::string& line) {
  const size_t at = line.find("release ");
  return at == std::string::npos ? "" : line.substr(at + 8, line.find(',', at) - at - 8);
}

std::string format_cache_table(const std::vector<nlohmann::json>& pinned, const std::vector<nlohmann::json>& vendor) {
  if (pinned.empty() && vendor.empty())
    return "the NCCL cache is empty (run `hangbench nccl build` or `hangbench nccl fetch`)\n";
  std::string table = fmt::format("{:<7} {:<32} {:<8} {:<5} {:<14} {:<8} {:<10} {}\n", "KIND", "NAME", "VERSION",
                                  "CUDA", "LIB SHA-256", "SLIMMED", "SM_90", "LIBRARY");
  auto slimmed = [](const nlohmann::json& m) {
    const auto it = m.find("slimmed_for_transport");
    return it != m.end() && it->is_object() ? fmt::format("sm_{}", it->value("kept_sm", 0)) : std::string("no");
  };
  for (const auto& m : pinned)
    table += fmt::format("{:<7} {:<32} {:<8} {:<5} {:<14} {:<8} {:<10} {}/{}\n", "pinned", m.value("variant", "?"),
                         m.value("version", "?"), cuda_release(m.value("cuda_version", "")),
                         m.value("library_sha256", "").substr(0, 12), slimmed(m), "-", m.value("output_dir", "?"),
                         m.value("library", "?"));
  for (const auto& m : vendor) {
    const auto runs = m.find("runs_on_sm90");
    table += fmt::format("{:<7} {:<32} {:<8} {:<5} {:<14} {:<8} {:<10} {}/{}\n", "vendor",
                         m.value("package", "?") + " " + m.value("package_version", "?"), m.value("nccl_version", "?"),
                         m.value("cuda_build", "?"), m.value("library_sha256", "").substr(0, 12), slimmed(m),
                         runs != m.end() && runs->is_object() ? runs->value("runs", "?") : "?",
                         m.value("output_dir", "?"), m.value("library", "?"));
  }
  return table;
}

void print_inspection(const InspectResult& r, std::ostream& out) {
  out << r.path << "\n"
      << fmt::format("  version               {}{}\n", r.version.empty() ? "unknown" : r.version,
                     r.loaded            ? " (ncclGetVersion through dlopen)"
                     : r.version.empty() ? ""
                                         : " (version string)")
      << fmt::format("  sha256                {}\n", r.sha256)
      << fmt::format("  imports shutdown      {}\n", r.imports_shutdown ? "yes" : "no")
      << fmt::format("  ncclSocketClose       {}\n", r.has_symbols ? "found" : "not found (no symbols)")
      << fmt::format("  ...calls shutdown     {}\n", r.socket_close_calls_shutdown == 1   ? "yes"
                                                     : r.socket_close_calls_shutdown == 0 ? "no"
                                                                                          : "cannot tell")
      << fmt::format("  teardown fix present  {}\n", to_string(r.fix)) << "  reasons:\n";
  for (const std::string& reason : r.reasons) out << "    - " << reason << "\n";
  print_fatbin(r.fatbin, out);
  out << "  " << describe(r.runs_on_sm90) << "\n";
}

}  // namespace

int inspect_command(const std::vector<std::string>& libraries, bool json, bool try_dlopen, std::ostream& out,
                    std::ostream& err, bool require_fix) {
  int worst = exit_code::kOk;
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& library : libraries) {
    // One library that cannot be read does not stop the others: its error is said
    // and mapped as cli/guarded.cpp does for a whole command (hangbench/errors.hpp).
    int rc = exit_code::kOk;
    try {
      InspectResult r = inspect(library, try_dlopen);
      if (json)
        all.push_back(to_json(r));
      else
        print_inspection(r, out);
      if (require_fix && r.fix != FixVerdict::Yes) {
        err << "hangbench nccl inspect: " << library
            << (r.fix == FixVerdict::No ? ": the teardown fix is absent\n"
                                        : ": cannot tell whether the teardown fix is present\n");
        rc = r.fix == FixVerdict::No ? exit_code::kContradicted : exit_code::kInfra;
      }
    } catch (const std::exception& e) {
      err << error_line("nccl inspect", e) << "\n";
      rc = exit_code_of(e);
    }
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
  const auto built = build_with_patched(recipe_dir, options, [&](const std::string& line) {
    err << "[nccl build] " << line << "\n" << std::flush;
  });
  nlohmann::json summary = nlohmann::json::array();
  for (const BuiltVariant& b : built) {
    summary.push_back({{"variant", b.name},
                       {"library", b.library},
                       {"cache_key", b.cache_key},
                       {"how", b.how},
                       {"seconds", b.seconds},
                       {"recompiled", b.recompiled.size()}});
    if (!json) out << fmt::format("{:<20} {:<26} {}\n", b.name, b.how, b.library);
  }
  if (json) out << summary.dump(2) << "\n";
  return exit_code::kOk;
}

int fetch_command(const VendorRequest& request, bool json, std::ostream& out, std::ostream& err) {
  const auto entries =
      fetch_vendor(request, [&](const std::string& line) { err << "[nccl fetch] " << line << "\n"
                                                               << std::flush; });
  nlohmann::json summary = nlohmann::json::array();
  for (const VendorEntry& e : entries) {
    nlohmann::json m = e.manifest;
    m["output_dir"] = e.output_dir;
    m["how"] = e.how;
    summary.push_back(m);
    if (!json)
      out << fmt::format("{:<18} {:<14} NCCL {:<8} CUDA {:<5} {:<11} {}\n", e.package, e.package_version,
                         e.manifest.value("nccl_version", "?"), e.manifest.value("cuda_build", "?"), e.how, e.library);
  }
  if (json) out << summary.dump(2) << "\n";
  return exit_code::kOk;
}

int list_command(const std::string& cache_dir, bool json, std::ostream& out, std::ostream& /*err*/) {
  const std::string cache = cache_dir.empty() ? default_cache_dir() : cache_dir;
  auto pinned = list_built(cache);
  for (auto& m : pinned) m["kind"] = "pinned";
  const auto vendor = list_vendor(cache);
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto* group : std::initializer_list<const std::vector<nlohmann::json>*>{&pinned, &vendor})
      for (const auto& m : *group) all.push_back(m);
    out << all.dump(2) << "\n";
  } else {
    out << format_cache_table(pinned, vendor);
  }
  return exit_code::kOk;
}

int slim_command(const std::string& library, const std::string& output, const std::string& entry_out, uint32_t keep_sm,
                 bool json, std::ostream& out, std::ostream& /*err*/) {
  if (output.empty() == entry_out.empty()) throw UsageError("give exactly one of --out FILE and --entry-out DIR");
  SlimResult r;
  if (entry_out.empty()) {
    r = slim_library(library, output, keep_sm);
    std::ofstream(output + ".slim.json") << to_json(r).dump(2) << "\n";
  } else {
    r = slim_cache_entry(library, entry_out, keep_sm);
  }
  if (json) {
    out << to_json(r).dump(2) << "\n";
  } else {
    out << fmt::format(
        "{} -> {}\n  kept {} entries ({:.1f} MB) for sm_{}, zeroed {} ({:.1f} MB); size {} bytes\n"
        "  sha256 {} -> {}\n",
        r.library, r.output, r.kept_entries, r.kept_bytes / 1e6, r.kept_sm, r.zeroed_entries, r.zeroed_bytes / 1e6,
        r.file_size, r.original_sha256, r.slimmed_sha256);
    for (const std::string& note : r.notes) out << "  note: " << note << "\n";
  }
  return exit_code::kOk;
}

int shim_command(const std::string& torch_lib, const std::string& nccl_lib, const std::string& output, int error_code,
                 std::ostream& out, std::ostream& /*err*/) {
  if (error_code <= 0 || error_code > 7) throw UsageError("--error-code must be an ncclResult_t from 1 to 7");
  const auto missing = build_compat_shim(torch_lib, nccl_lib, output, error_code);
  out << fmt::format("{}: {} missing entry point(s){}{}\n", output, missing.size(), missing.empty() ? "" : ": ",
                     fmt::join(missing, " "));
  return exit_code::kOk;
}

}  // namespace hangbench::nccl
