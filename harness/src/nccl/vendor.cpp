// NVIDIA's NCCL wheels as cache entries: pip downloads, unzip extracts
// libnccl.so.2, inspect reads it, and the entry lands in
// <cache>/vendor/<package>-<version>-<key12>/{manifest.json,lib/libnccl.so.2}
// where the key is the wheel's SHA-256.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hangbench/nccl_inspect.hpp"
#include "hangbench/nccl_vendor.hpp"
#include "hangbench/provenance.hpp"
#include "nccl/elf_image.hpp"
#include "nccl/json_file.hpp"
#include "nccl/process.hpp"
#include "nccl/sha256.hpp"
#include "nccl/version_probe.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {
namespace {

constexpr const char* kSchema = "hangbench.nccl-vendor/1";
// Every manylinux tag NVIDIA's x86-64 wheels have used (manylinux1 ...
// manylinux_2_18) up to glibc 2.28, named one by one: pip 23 does not widen a
// --platform to older tags. Then the local Python's own tags do not matter.
std::vector<std::string> pip_platform_args() {
  std::vector<std::string> args;
  for (const char* legacy : {"manylinux1", "manylinux2010", "manylinux2014"})
    args.insert(args.end(), {"--platform", std::string(legacy) + "_x86_64"});
  for (int glibc_minor = 17; glibc_minor <= 28; ++glibc_minor)
    args.insert(args.end(), {"--platform", fmt::format("manylinux_2_{}_x86_64", glibc_minor)});
  return args;
}

class TempDir {
 public:
  explicit TempDir(const fs::path& parent) {
    fs::create_directories(parent);
    std::string pattern = (parent / ".fetch-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory in " + parent.string());
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string normalise_name(std::string name) {  // PEP 503: nvidia_nccl_cu12 -> nvidia-nccl-cu12
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return c == '_' || c == '.' ? '-' : std::tolower(c); });
  return name;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

struct WheelFacts {
  std::string name, version, library_member;
};

WheelFacts read_wheel(const std::string& wheel) {
  const ProcessResult listing = run_process({"unzip", "-Z1", wheel});
  if (listing.exit_status != 0) throw UsageError(wheel + ": not a wheel (unzip cannot read it as a zip archive)");
  WheelFacts facts;
  std::string metadata_member;
  for (const std::string& member : lines_of(listing.output)) {
    const std::string base = fs::path(member).filename().string();
    if (base == "libnccl.so.2" && facts.library_member.empty()) facts.library_member = member;
    if (base == "METADATA" && member.find(".dist-info/") != std::string::npos) metadata_member = member;
  }
  if (facts.library_member.empty()) throw UsageError(wheel + ": holds no libnccl.so.2: not an NCCL wheel");
  if (!metadata_member.empty()) {
    const ProcessResult metadata = run_process({"unzip", "-p", wheel, metadata_member});
    for (const std::string& line : lines_of(metadata.output)) {
      if (line.rfind("Name: ", 0) == 0) facts.name = normalise_name(line.substr(6));
      if (line.rfind("Version: ", 0) == 0) facts.version = line.substr(9);
      if (line.empty() || (!facts.name.empty() && !facts.version.empty())) break;
    }
  }
  // Without METADATA: the file name, {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl.
  const std::string stem = fs::path(wheel).stem().string();
  const size_t dash = stem.find('-');
  if (facts.name.empty() && dash != std::string::npos) facts.name = normalise_name(stem.substr(0, dash));
  if (facts.version.empty() && dash != std::string::npos)
    facts.version = stem.substr(dash + 1, stem.find('-', dash + 1) - dash - 1);
  if (facts.name.empty() || facts.version.empty())
    throw UsageError(wheel + ": neither METADATA nor the file name gives the package name and version");
  return facts;
}

std::optional<fs::path> cached_entry(const fs::path& vendor_dir, const std::string& prefix) {
  if (!fs::is_directory(vendor_dir)) return std::nullopt;
  for (const auto& entry : fs::directory_iterator(vendor_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && fs::exists(entry.path() / "manifest.json") &&
        fs::exists(entry.path() / "lib" / "libnccl.so.2"))
      return entry.path();
  }
  return std::nullopt;
}

VendorEntry cached(const fs::path& dir) {
  nlohmann::json m = read_json(dir / "manifest.json");
  return {m.value("package", ""),
          m.value("package_version", ""),
          dir.string(),
          (dir / "lib" / "libnccl.so.2").string(),
          "cached",
          m};
}

// The wheel's library into a new cache entry (or the entry it already has).
VendorEntry ingest(const std::string& wheel, const std::string& source, const fs::path& vendor_dir,
                   const Progress& progress) {
  if (!fs::is_regular_file(wheel)) throw UsageError(wheel + ": no such wheel file");
  const WheelFacts facts = read_wheel(wheel);
  const std::string wheel_sha256 = sha256_file_hex(wheel);
  const std::string entry_name = fmt::format("{}-{}-{}", facts.name, facts.version, wheel_sha256.substr(0, 12));
  if (auto dir = cached_entry(vendor_dir, entry_name)) return cached(*dir);

  TempDir staging(vendor_dir);
  const fs::path lib_dir = staging.path() / "lib";
  fs::create_directories(lib_dir);
  progress(fmt::format("extracting {} from {}", facts.library_member, fs::path(wheel).filename().string()));
  const ProcessResult unzip =
      run_process({"unzip", "-q", "-o", "-j", wheel, facts.library_member, "-d", lib_dir.string()});
  const fs::path library = lib_dir / "libnccl.so.2";
  if (unzip.exit_status != 0 || !fs::exists(library))
    throw std::runtime_error(
        fmt::format("{}: unzip could not extract {}: {}", wheel, facts.library_member, unzip.output));

  InspectResult inspected;
  try {
    inspected = inspect(library.string(), /*try_dlopen=*/true);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}: its libnccl.so.2 is not an NCCL library ({})", wheel, e.what()));
  }
  const std::string cuda_build = cuda_build_from_string(ElfImage(library.string()).section_contents(".rodata"));
  nlohmann::json m = {{"schema", kSchema},
                      {"kind", "vendor"},
                      {"package", facts.name},
                      {"package_version", facts.version},
                      {"wheel", fs::path(wheel).filename().string()},
                      {"wheel_sha256", wheel_sha256},
                      {"wheel_source", source},
                      {"wheel_member", facts.library_member},
                      {"nccl_version", inspected.version},
                      {"nccl_version_code", inspected.version_code},
                      {"version_source", inspected.loaded            ? "ncclGetVersion"
                                         : inspected.version.empty() ? ""
                                                                     : "version string"},
                      {"cuda_build", cuda_build},
                      {"cache_key", wheel_sha256},
                      {"library", "lib/libnccl.so.2"},
                      {"library_sha256", inspected.sha256},
                      {"original_library_sha256", inspected.sha256},
                      {"library_size", fs::file_size(library)},
                      {"teardown_fix_present", to_string(inspected.fix)},
                      {"fatbin",
                       {{"sass_archs", inspected.fatbin.sass_archs},
                        {"ptx_archs", inspected.fatbin.ptx_archs},
                        {"relfatbin_ptx_archs", inspected.fatbin.relfatbin_ptx_archs}}},
                      {"runs_on_sm90", to_json(inspected.runs_on_sm90)},
                      {"slimmed_for_transport", nullptr},
                      {"fetched_at", utc_now_iso8601()}};
  std::ofstream(staging.path() / "manifest.json") << m.dump(2) << "\n";
  const fs::path out = vendor_dir / entry_name;
  std::error_code ec;
  fs::rename(staging.path(), out, ec);
  if (ec) {  // another fetch of the same wheel finished first: its entry is as good
    if (auto dir = cached_entry(vendor_dir, entry_name)) return cached(*dir);
    throw std::runtime_error(fmt::format("cannot move the entry into {}: {}", out.string(), ec.message()));
  }
  progress(fmt::format("{} {}: NCCL {} (CUDA {}) in {}", facts.name, facts.version, inspected.version,
                       cuda_build.empty() ? "?" : cuda_build, out.string()));
  return {facts.name,
          facts.version,
          out.string(),
          (out / "lib" / "libnccl.so.2").string(),
          source == "pypi" ? "downloaded" : "from wheel",
          m};
}

// "(from versions: 2.16.2, 2.16.5)" in pip's error output.
std::string versions_pip_lists(const std::string& output) {
  const std::string marker = "(from versions: ";
  const size_t at = output.find(marker);
  if (at == std::string::npos) return "";
  const size_t end = output.find(')', at);
  return output.substr(at + marker.size(), end == std::string::npos ? std::string::npos : end - at - marker.size());
}

std::string download(const VendorRequest& request, const std::string& package, const std::string& version,
                     const fs::path& dest, const Progress& progress) {
  progress(fmt::format("pip download {}=={}", package, version));
  std::vector<std::string> argv = {request.python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"};
  const auto platforms = pip_platform_args();
  argv.insert(argv.end(), platforms.begin(), platforms.end());
  argv.insert(argv.end(), {"--python-version", "3.12", "--implementation", "cp", "--disable-pip-version-check",
                           "--dest", dest.string(), package + "==" + version});
  const ProcessResult pip = run_process(argv);
  if (pip.exit_status != 0) {
    const std::string versions = versions_pip_lists(pip.output);
    if (!versions.empty() && versions != "none")
      throw UsageError(
          fmt::format("{} has no release {} for x86-64 Linux; the index has: {}", package, version, versions));
    const auto lines = lines_of(pip.output);
    // "(from versions: none)": the package exists for x86-64 Linux, so the index was not reached.
    throw std::runtime_error(fmt::format("pip download {}=={} failed{}: {}", package, version,
                                         versions == "none" ? " (the index listed no versions: is it reachable?)" : "",
                                         lines.empty() ? "no output" : lines.back()));
  }
  for (const auto& entry : fs::directory_iterator(dest))
    if (entry.path().extension() == ".whl") return entry.path().string();
  throw std::runtime_error(fmt::format("pip download {}=={} succeeded but left no wheel", package, version));
}

}  // namespace

std::string vendor_package(int cuda) {
  if (cuda != 11 && cuda != 12 && cuda != 13)
    throw UsageError(
        fmt::format("--cuda {}: NVIDIA publishes "
                    "nvidia-nccl-cu11, -cu12 and -cu13",
                    cuda));
  return fmt::format("nvidia-nccl-cu{}", cuda);
}

std::string cuda_build_from_string(const std::string& rodata) {
  const std::string prefix = "NCCL version ";
  for (size_t at = rodata.find(prefix); at != std::string::npos; at = rodata.find(prefix, at + 1)) {
    size_t pos = at + prefix.size();
    while (pos < rodata.size() && (std::isdigit(static_cast<unsigned char>(rodata[pos])) || rodata[pos] == '.')) ++pos;
    if (rodata.compare(pos, 5, "+cuda") != 0) continue;
    pos += 5;
    const size_t start = pos;
    while (pos < rodata.size() && (std::isdigit(static_cast<unsigned char>(rodata[pos])) || rodata[pos] == '.')) ++pos;
    if (pos > start) return rodata.substr(start, pos - start);
  }
  return "";
}

std::vector<VendorEntry> fetch_vendor(const VendorRequest& request, const Progress& progress) {
  const std::string package = vendor_package(request.cuda);
  if (request.versions.empty() && request.wheels.empty()) throw UsageError("name a VERSION or give --wheel FILE");
  const fs::path vendor_dir = fs::path(request.cache_dir.empty() ? default_cache_dir() : request.cache_dir) / "vendor";
  std::vector<VendorEntry> entries;
  for (const std::string& version : request.versions) {
    if (version.empty() || version.find_first_of("/ =<>!") != std::string::npos)
      throw UsageError("'" + version + "' is not a release version");
    // A release once fetched is not downloaded again (a wheel's version never changes content on PyPI).
    if (auto dir = cached_entry(vendor_dir, package + "-" + version + "-")) {
      entries.push_back(cached(*dir));
      continue;
    }
    TempDir dest(vendor_dir);
    const std::string wheel = download(request, package, version, dest.path(), progress);
    entries.push_back(ingest(wheel, "pypi", vendor_dir, progress));
  }
  for (const std::string& wheel : request.wheels) entries.push_back(ingest(wheel, "file", vendor_dir, progress));
  return entries;
}

std::vector<nlohmann::json> list_vendor(const std::string& cache_dir) {
  std::vector<nlohmann::json> manifests;
  const fs::path vendor_dir = fs::path(cache_dir) / "vendor";
  if (!fs::is_directory(vendor_dir)) return manifests;
  for (const auto& entry : fs::directory_iterator(vendor_dir)) {
    if (!entry.is_directory() || entry.path().filename().string().front() == '.') continue;
    nlohmann::json m = read_json(entry.path() / "manifest.json");
    if (m.is_discarded() || !m.is_object()) continue;
    m["output_dir"] = entry.path().string();
    manifests.push_back(std::move(m));
  }
  auto ordinal = [](const nlohmann::json& m) {
    const auto v = version_from_string("NCCL version " + m.value("nccl_version", ""));
    return v ? v->ordinal : 0;
  };
  std::sort(manifests.begin(), manifests.end(), [&](const auto& a, const auto& b) {
    return std::make_tuple(ordinal(a), a.value("package", ""), a.value("package_version", "")) <
           std::make_tuple(ordinal(b), b.value("package", ""), b.value("package_version", ""));
  });
  return manifests;
}

std::optional<nlohmann::json> find_cache_entry_for_library(const std::string& library) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(library, ec).parent_path();
  if (ec) return std::nullopt;
  if (dir.filename() == "stripped") dir = dir.parent_path();
  if (dir.filename() != "lib") return std::nullopt;
  // Told by the manifest, not the folder: the GPU bundle unpacks pinned variants as <cache>/<variant>/.
  const fs::path entry = dir.parent_path();
  nlohmann::json m = read_json(entry / "manifest.json");
  if (m.is_discarded() || !m.is_object()) return std::nullopt;
  if (m.value("schema", "") == kSchema)
    m["kind"] = "vendor";
  else if (m.contains("variant"))
    m["kind"] = "pinned";
  else
    return std::nullopt;
  m["output_dir"] = entry.string();
  return m;
}

SlimResult slim_cache_entry(const std::string& library, const std::string& entry_out, uint32_t keep_sm) {
  auto manifest = find_cache_entry_for_library(library);
  if (!manifest) throw UsageError(library + ": not in an NCCL cache entry (<cache>/vendor|variants/<entry>/lib/)");
  fs::create_directories(fs::path(entry_out) / "lib");
  SlimResult r = slim_library(library, (fs::path(entry_out) / "lib" / "libnccl.so.2").string(), keep_sm);
  nlohmann::json slim = to_json(r);
  slim.erase("library"), slim.erase("output");  // paths of this machine; the entry says where it lies
  nlohmann::json& m = *manifest;
  m.erase("output_dir");
  if (m.value("kind", "") == "pinned") m.erase("kind");  // pinned manifests have no kind field of their own
  m["original_library_sha256"] = r.original_sha256;
  m["library_sha256"] = r.slimmed_sha256;
  m["slimmed_for_transport"] = slim;
  std::ofstream(fs::path(entry_out) / "manifest.json") << m.dump(2) << "\n";
  return r;
}

}  // namespace hangbench::nccl
