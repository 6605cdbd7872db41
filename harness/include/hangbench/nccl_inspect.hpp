// Static and dynamic checks of any libnccl.so: which version, and does its
// ncclSocketClose call shutdown() (the teardown fix of NCCL 2.18.1)?
// Owned by harness/src/nccl.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/nccl_fatbin.hpp"

namespace hangbench::nccl {

enum class FixVerdict { Yes, No, Unknown };
std::string to_string(FixVerdict v);  // "yes", "no", "unknown"

struct InspectResult {
  std::string path;
  std::string sha256;
  std::string version;                   // "2.17.1" from ncclGetVersion or the version string; "" if unknown
  int version_code = 0;                  // as ncclGetVersion reports it, 0 if unknown
  bool loaded = false;                   // ncclGetVersion was called through dlopen
  bool imports_shutdown = false;         // `shutdown` among the undefined dynamic symbols
  bool has_symbols = false;              // ncclSocketClose found in .symtab or .dynsym
  int socket_close_calls_shutdown = -1;  // 1 yes, 0 no, -1 cannot tell
  FixVerdict fix = FixVerdict::Unknown;
  std::vector<std::string> reasons;  // why the verdict, in words
  FatbinSummary fatbin;              // device code in .nv_fatbin / __nv_relfatbin
  ArchReading runs_on_sm90;          // can an H100/H200 load it? (reason in words)
  // The library's .rodata (a hundred-odd kilobytes in NVIDIA's builds), kept so that the
  // catalog's string checks read it here instead of opening the library again; not in to_json.
  std::string rodata;
};

// Throws std::invalid_argument with a clear message when `path` is not an ELF
// shared library or not NCCL (the CLI maps that to exit code 2).
// with_device_code=false skips the fatbin (`fatbin` and `runs_on_sm90` stay empty):
// diagnose needs the version, hash and shutdown() call, not the device code, which is
// most of a vendor library's hundreds of megabytes.
InspectResult inspect(const std::string& path, bool try_dlopen = true, bool with_device_code = true);
// inspect's first check alone, cheap: throws std::invalid_argument naming why
// `path` is not an NCCL shared library (not ELF, not ET_DYN, no ncclGetVersion).
void require_nccl_library(const std::string& path);
nlohmann::json to_json(const InspectResult& r);
// Whether the library's read-only data holds `text` as a whole C string (an environment
// variable's name that a release reads, say). Throws std::invalid_argument like inspect().
bool carries_string(const std::string& path, const std::string& text);
// The same over read-only data already read (InspectResult::rodata).
bool rodata_carries_string(const std::string& rodata, const std::string& text);

}  // namespace hangbench::nccl
