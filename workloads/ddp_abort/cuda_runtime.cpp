#include "cuda_runtime.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace hangbench::ddp {

namespace {
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNotReady = 600;
constexpr unsigned kEventDisableTiming = 0x02;

template <typename Fn>
void bind(Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  if (slot == nullptr) {
    throw std::runtime_error(std::string("CUDA runtime function ") + name +
                             " not found in the process: libcudart.so.13 (loaded by libtorch_cuda.so) is missing");
  }
}
}  // namespace

const CudaRuntime& CudaRuntime::get() {
  static const CudaRuntime runtime = [] {
    CudaRuntime r;
    bind(r.launch_host_func_, "cudaLaunchHostFunc");
    bind(r.event_create_with_flags_, "cudaEventCreateWithFlags");
    bind(r.event_record_, "cudaEventRecord");
    bind(r.event_query_, "cudaEventQuery");
    bind(r.event_destroy_, "cudaEventDestroy");
    bind(r.stream_synchronize_, "cudaStreamSynchronize");
    bind(r.get_error_string_, "cudaGetErrorString");
    return r;
  }();
  return runtime;
}

void CudaRuntime::check(int rc, const char* what) const {
  if (rc == kCudaSuccess) return;
  throw std::runtime_error(std::string(what) + ": " + get_error_string_(rc) + " (cudaError " + std::to_string(rc) +
                           ")");
}

void CudaRuntime::launch_host_func(Stream stream, HostFn fn, void* user_data) const {
  check(launch_host_func_(stream, fn, user_data), "cudaLaunchHostFunc");
}

CudaRuntime::Event CudaRuntime::create_event() const {
  Event event = nullptr;
  check(event_create_with_flags_(&event, kEventDisableTiming), "cudaEventCreateWithFlags");
  return event;
}

void CudaRuntime::record_event(Event event, Stream stream) const {
  check(event_record_(event, stream), "cudaEventRecord");
}

bool CudaRuntime::event_done(Event event) const {
  int rc = event_query_(event);
  if (rc == kCudaErrorNotReady) return false;
  check(rc, "cudaEventQuery");
  return true;
}

void CudaRuntime::destroy_event(Event event) const { check(event_destroy_(event), "cudaEventDestroy"); }

void CudaRuntime::synchronize(Stream stream) const { check(stream_synchronize_(stream), "cudaStreamSynchronize"); }

}  // namespace hangbench::ddp
