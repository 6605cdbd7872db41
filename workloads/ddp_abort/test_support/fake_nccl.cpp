// A stand-in libnccl for the CPU tests of workloads/common/nccl_loader: it
// exports NCCL's entry points with NCCL's C ABI and reports version 2.17.1.
// Built twice: complete, and with FAKE_NCCL_PARTIAL (no ncclCommAbort/
// ncclCommDestroy, like an NCCL older than the loader supports).
#include <cstddef>
#include <cstring>

extern "C" {

struct FakeComm {
  int rank, size;
};

int ncclGetVersion(int* version) {
  *version = 21701;
  return 0;
}
int ncclGetUniqueId(void* id) {
  std::memset(id, 0x5A, 128);
  return 0;
}
const char* ncclGetErrorString(int code) { return code == 0 ? "no error" : "fake nccl error"; }
int ncclGroupStart() { return 0; }
int ncclGroupEnd() { return 0; }
int ncclCommGetAsyncError(void*, int* error) {
  *error = 0;
  return 0;
}
int ncclAllReduce(const void*, void*, size_t, int, int, void*, void*) { return 0; }
struct FakeId {
  char internal[128];
};
int ncclCommInitRank(FakeComm** comm, int size, FakeId, int rank) {
  *comm = new FakeComm{rank, size};
  return 0;
}
#ifndef FAKE_NCCL_PARTIAL
int ncclCommAbort(FakeComm* comm) {
  delete comm;
  return 0;
}
int ncclCommDestroy(FakeComm* comm) {
  delete comm;
  return 0;
}
#endif
}
