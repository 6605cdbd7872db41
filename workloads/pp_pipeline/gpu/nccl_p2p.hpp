// NCCL point-to-point between neighbouring stages (multi-GPU mode), bound with
// dlopen so that the NCCL build is chosen at run time: LD_PRELOAD of a
// libnccl.so.2, HANGBENCH_NCCL_LIB=/path/libnccl.so.2, or whatever the process
// (libtorch_cuda) already loaded. ABI types come from common/nccl_loader.hpp.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "nccl_loader.hpp"

namespace pp::gpu {

class NcclP2p {
 public:
  // Collective over `comm`: rank 0 makes the unique id, MPI_Bcast shares it.
  // Throws std::runtime_error naming the library and the failing call.
  NcclP2p(MPI_Comm comm, int rank, int size);
  ~NcclP2p();  // ncclCommDestroy on the normal path (abort() for the hang path)
  NcclP2p(const NcclP2p&) = delete;
  NcclP2p& operator=(const NcclP2p&) = delete;

  void send(const float* data, std::size_t elements, int peer, void* stream);
  void recv(float* data, std::size_t elements, int peer, void* stream);
  void abort();  // hang path: ncclCommAbort, idempotent

  const std::string& library_path() const { return library_path_; }
  const std::string& version() const { return version_; }

 private:
  using Comm = hangbench::nccl_abi::ncclComm_t;
  using Result = hangbench::nccl_abi::ncclResult_t;
  void check(Result r, const std::string& what) const;

  void* handle_ = nullptr;
  Comm comm_ = nullptr;
  std::string library_path_, version_;
  Result (*send_)(const void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*recv_)(void*, std::size_t, int, int, Comm, void*) = nullptr;
  Result (*destroy_)(Comm) = nullptr;
  Result (*abort_)(Comm) = nullptr;
  const char* (*error_string_)(Result) = nullptr;
};

}  // namespace pp::gpu
