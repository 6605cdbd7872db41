// Loads a chosen libnccl.so with dlopen and binds the handful of entry points a
// training job uses, without including any nccl.h: the library may be 2.16 or
// 2.28, a pinned build or a vendor binary, and the ABI of these calls is stable
// over that range. Only NCCL's public ABI types are declared here.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hangbench::nccl_abi {

// Public ABI of nccl.h (unchanged from 2.16 through 2.28).
struct ncclComm;
using ncclComm_t = ncclComm*;
struct ncclUniqueId {
  char internal[128];
};
using ncclResult_t = int;  // 0 = ncclSuccess, 7 = ncclInProgress
inline constexpr ncclResult_t kSuccess = 0;
inline constexpr ncclResult_t kInProgress = 7;
using ncclDataType_t = int;
inline constexpr ncclDataType_t kFloat32 = 7;
using ncclRedOp_t = int;
inline constexpr ncclRedOp_t kSum = 0;
using cudaStream_t = void*;  // CUstream_st*; NCCL only passes it through

// Thrown when a library cannot be used: missing file, dlopen failure, or not NCCL.
class NcclLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "2.17.1" from ncclGetVersion's code (2.9+ encodes major*10000+minor*100+patch,
// older releases major*1000+minor*100+patch).
std::string version_string(int code);

// The entry points, bound from one library handle.
struct NcclApi {
  ncclResult_t (*GetVersion)(int*) = nullptr;
  ncclResult_t (*GetUniqueId)(ncclUniqueId*) = nullptr;
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                            cudaStream_t) = nullptr;
  ncclResult_t (*CommAbort)(ncclComm_t) = nullptr;
  ncclResult_t (*CommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t*) = nullptr;
  const char* (*GetErrorString)(ncclResult_t) = nullptr;
  ncclResult_t (*GroupStart)() = nullptr;
  ncclResult_t (*GroupEnd)() = nullptr;
  // 2.14 on; nullptr in older libraries (optional: bound when present, never required).
  ncclResult_t (*CommInitRankConfig)(ncclComm_t*, int, ncclUniqueId, int, void* config) = nullptr;
};

// Owns the dlopen handle. Not copyable; closing is left to process exit on
// purpose (NCCL's threads may outlive any scope in a hung teardown).
class NcclLibrary {
 public:
  // dlopen(path) with RTLD_DEEPBIND, so that the library's internal calls to its
  // own exported ncclXxx bind to itself even when libtorch_cuda has already
  // loaded another libnccl.so.2 into the global scope.
  static NcclLibrary open(const std::string& path);
  // Binds whatever NCCL the process already has (LD_PRELOAD or libtorch_cuda's
  // dependency), through RTLD_DEFAULT. Throws if none is loaded.
  static NcclLibrary from_process();

  NcclLibrary(NcclLibrary&&) noexcept = default;
  NcclLibrary& operator=(NcclLibrary&&) noexcept = default;
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  const NcclApi& api() const { return api_; }
  int version_code() const { return version_code_; }
  std::string version() const { return version_string(version_code_); }
  // The file the entry points really come from (dladdr of ncclGetVersion).
  const std::string& resolved_path() const { return resolved_path_; }

  // Throws std::runtime_error "<what>: <NCCL error string> (code N)" unless ok.
  void check(ncclResult_t result, const std::string& what) const;

 private:
  NcclLibrary() = default;
  void bind(void* handle, const std::string& origin);

  void* handle_ = nullptr;
  NcclApi api_;
  int version_code_ = 0;
  std::string resolved_path_;
};

}  // namespace hangbench::nccl_abi
