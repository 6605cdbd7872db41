#include "nccl_p2p.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

namespace pp::gpu {
namespace {

using hangbench::nccl_abi::ncclUniqueId;

template <typename Fn>
Fn bind(void* handle, const char* name, const std::string& origin) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) throw std::runtime_error(origin + " lacks " + name);
  return reinterpret_cast<Fn>(symbol);
}

}  // namespace

NcclP2p::NcclP2p(MPI_Comm comm, int rank, int size) {
  const char* chosen = std::getenv("HANGBENCH_NCCL_LIB");
  const std::string request = chosen != nullptr && *chosen ? chosen : "libnccl.so.2";
  // RTLD_NOLOAD first: reuse an NCCL already in the process (LD_PRELOAD, libtorch_cuda).
  handle_ = dlopen(request.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle_ == nullptr) handle_ = dlopen(request.c_str(), RTLD_NOW);
  if (handle_ == nullptr) throw std::runtime_error("dlopen(" + request + "): " + dlerror());
  auto get_version = bind<Result (*)(int*)>(handle_, "ncclGetVersion", request);
  auto get_unique_id = bind<Result (*)(ncclUniqueId*)>(handle_, "ncclGetUniqueId", request);
  auto init_rank = bind<Result (*)(Comm*, int, ncclUniqueId, int)>(handle_, "ncclCommInitRank", request);
  send_ = bind<decltype(send_)>(handle_, "ncclSend", request);
  recv_ = bind<decltype(recv_)>(handle_, "ncclRecv", request);
  destroy_ = bind<decltype(destroy_)>(handle_, "ncclCommDestroy", request);
  abort_ = bind<decltype(abort_)>(handle_, "ncclCommAbort", request);
  error_string_ = bind<decltype(error_string_)>(handle_, "ncclGetErrorString", request);
  Dl_info info{};
  library_path_ = dladdr(reinterpret_cast<void*>(get_version), &info) && info.dli_fname ? info.dli_fname : request;
  int code = 0;
  check(get_version(&code), "ncclGetVersion");
  // 2.9+ encodes major*10000 + minor*100 + patch.
  version_ = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);

  ncclUniqueId id{};
  if (rank == 0) check(get_unique_id(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  check(init_rank(&comm_, size, id, rank), "ncclCommInitRank");
}

NcclP2p::~NcclP2p() {
  if (comm_ != nullptr) destroy_(comm_);
}

void NcclP2p::check(Result r, const std::string& what) const {
  if (r == hangbench::nccl_abi::kSuccess) return;
  const std::string text = error_string_ != nullptr ? error_string_(r) : "unknown";
  throw std::runtime_error(what + " (" + library_path_ + "): " + text + " (code " + std::to_string(r) + ")");
}

void NcclP2p::send(const float* data, std::size_t elements, int peer, void* stream) {
  check(send_(data, elements, hangbench::nccl_abi::kFloat32, peer, comm_, stream), "ncclSend");
}

void NcclP2p::recv(float* data, std::size_t elements, int peer, void* stream) {
  check(recv_(data, elements, hangbench::nccl_abi::kFloat32, peer, comm_, stream), "ncclRecv");
}

void NcclP2p::abort() {
  if (comm_ == nullptr) return;
  abort_(comm_);
  comm_ = nullptr;
}

}  // namespace pp::gpu
