// What the NCCL rule says about the libnccl.so a process has loaded. The
// inspector lives in harness/src/nccl; it is referenced weakly so that the
// evidence code links (and says "inspect unavailable") while it is absent.
#include "hangbench/nccl_library.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <set>

#include "hangbench/file_identity.hpp"
#include "hangbench/nccl_inspect.hpp"

namespace hangbench::nccl {
InspectResult inspect(const std::string& path, bool try_dlopen, bool with_device_code) __attribute__((weak));
}

namespace hangbench::diagnose {

namespace {

NcclLibraryFacts describe_uncached(const std::string& path) {
  NcclLibraryFacts facts;
  facts.path = path;
  facts.calls_shutdown = "unknown";
  if (&nccl::inspect == nullptr) {
    facts.sentence = fmt::format("the NCCL library in this process is {} (inspect unavailable in this build)", path);
    return facts;
  }
  try {
    // Never dlopen from diagnose: a static read of the file is enough and has no side effects.
    // The device code is not read: it says nothing about the hang.
    auto r = nccl::inspect(path, false, false);
    facts.inspected = true;
    facts.version = r.version;
    facts.sha256 = r.sha256;
    facts.calls_shutdown = r.socket_close_calls_shutdown == 1 ? "yes"
                           : r.socket_close_calls_shutdown == 0
                               ? "no"
                               : (r.imports_shutdown ? "probably (it imports shutdown)" : "unknown");
    std::string version = r.version.empty() ? "of unknown version" : "version " + r.version;
    std::string verdict = facts.calls_shutdown == "yes"  ? "does call shutdown() before close() (the 2.18.1 fix)"
                          : facts.calls_shutdown == "no" ? "does NOT call shutdown() (close-only, like 2.17.1)"
                                                         : "may or may not call shutdown(): " + facts.calls_shutdown;
    facts.sentence =
        fmt::format("the NCCL library in this process is {} ({}) and its ncclSocketClose {}", path, version, verdict);
  } catch (const std::exception& e) {
    facts.sentence = fmt::format("the NCCL library in this process is {} (inspect failed: {})", path, e.what());
  }
  return facts;
}

}  // namespace

bool is_nccl_library(const std::string& path) { return path.find("libnccl") != std::string::npos; }

std::vector<std::string> nccl_libraries_mapped(const Snapshot& s) {
  std::set<std::string> paths;
  for (const auto& p : s.processes)
    for (const auto& lib : p.libraries)
      if (is_nccl_library(lib)) paths.insert(lib);
  return {paths.begin(), paths.end()};
}

// Every hung trial of a cell has the same libraries loaded; a 200 MB vendor
// build takes a second to read, so each file is inspected once per process.
namespace {
std::mutex remembered_mutex;
std::map<std::string, NcclLibraryFacts>& remembered() {
  static std::map<std::string, NcclLibraryFacts> facts;
  return facts;
}
}  // namespace

void remember_nccl_library(const NcclLibraryFacts& facts) {
  std::lock_guard<std::mutex> lock(remembered_mutex);
  remembered()[facts.path] = facts;
}

NcclLibraryFacts describe_nccl_library(const std::string& path) {
  {
    // Only stored evidence judged again remembers anything: a live diagnosis stats nothing extra.
    std::lock_guard<std::mutex> lock(remembered_mutex);
    struct stat st {};
    if (auto it = remembered().find(path); it != remembered().end() && ::stat(path.c_str(), &st) != 0)
      return it->second;
  }
  static PerFileMemo<NcclLibraryFacts> known;
  return known.get(path, describe_uncached);
}

}  // namespace hangbench::diagnose
