#include "nccl_loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace hangbench::nccl_abi {

std::string version_string(int code) {
  if (code <= 0) return "unknown";
  int major, minor, patch;
  if (code >= 20900) {  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  } else {  // X*1000 + Y*100 + Z before
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

namespace {

template <typename Fn>
void bind_symbol(void* handle, const char* name, Fn& slot, std::vector<std::string>& missing) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    missing.emplace_back(name);
    return;
  }
  slot = reinterpret_cast<Fn>(symbol);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

NcclLibrary NcclLibrary::open(const std::string& path) {
  struct stat st {};
  if (path.empty()) throw NcclLoadError("no NCCL library given (--nccl-lib PATH)");
  if (::stat(path.c_str(), &st) != 0) {
    throw NcclLoadError("cannot use NCCL library '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw NcclLoadError("NCCL library '" + path + "' is not a regular file");
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw NcclLoadError("dlopen('" + path + "') failed: " + (why ? why : "unknown error") +
                        " (is it a shared library for this machine, with its dependencies "
                        "on LD_LIBRARY_PATH?)");
  }
  NcclLibrary lib;
  lib.handle_ = handle;
  lib.bind(handle, path);
  return lib;
}

NcclLibrary NcclLibrary::from_process() {
  NcclLibrary lib;
  lib.handle_ = RTLD_DEFAULT;
  lib.bind(RTLD_DEFAULT, "the process (RTLD_DEFAULT)");
  return lib;
}

void NcclLibrary::bind(void* handle, const std::string& origin) {
  std::vector<std::string> missing;
  bind_symbol(handle, "ncclGetVersion", api_.GetVersion, missing);
  if (api_.GetVersion == nullptr) {
    throw NcclLoadError("'" + origin + "' is not an NCCL library: it defines no ncclGetVersion");
  }
  bind_symbol(handle, "ncclGetUniqueId", api_.GetUniqueId, missing);
  bind_symbol(handle, "ncclCommInitRank", api_.CommInitRank, missing);
  bind_symbol(handle, "ncclAllReduce", api_.AllReduce, missing);
  bind_symbol(handle, "ncclCommAbort", api_.CommAbort, missing);
  bind_symbol(handle, "ncclCommDestroy", api_.CommDestroy, missing);
  bind_symbol(handle, "ncclCommGetAsyncError", api_.CommGetAsyncError, missing);
  bind_symbol(handle, "ncclGetErrorString", api_.GetErrorString, missing);
  bind_symbol(handle, "ncclGroupStart", api_.GroupStart, missing);
  bind_symbol(handle, "ncclGroupEnd", api_.GroupEnd, missing);
  api_.CommInitRankConfig =
      reinterpret_cast<decltype(api_.CommInitRankConfig)>(dlsym(handle, "ncclCommInitRankConfig"));
  if (!missing.empty()) {
    throw NcclLoadError("'" + origin + "' lacks NCCL entry points: " + join(missing) +
                        " (NCCL older than 2.16, or not NCCL)");
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(api_.GetVersion), &info) != 0 && info.dli_fname) {
    resolved_path_ = info.dli_fname;
  } else {
    resolved_path_ = origin;
  }
  int code = 0;
  ncclResult_t rc = api_.GetVersion(&code);
  if (rc != kSuccess || code <= 0) {
    throw NcclLoadError("ncclGetVersion of '" + resolved_path_ + "' failed (code " + std::to_string(rc) + ")");
  }
  version_code_ = code;
}

void NcclLibrary::check(ncclResult_t result, const std::string& what) const {
  if (result == kSuccess) return;
  std::string text = api_.GetErrorString ? api_.GetErrorString(result) : "unknown NCCL error";
  throw std::runtime_error(what + ": " + text + " (NCCL " + version() + ", code " + std::to_string(result) + ")");
}

}  // namespace hangbench::nccl_abi
