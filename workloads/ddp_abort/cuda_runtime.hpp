// The few CUDA runtime calls ddp_abort makes itself, bound at run time from the
// libcudart that libtorch_cuda.so has already loaded. Linking libcudart directly
// would add a NEEDED entry that only torch's RPATH can resolve on the GPU machine.
#pragma once

#include <string>

namespace hangbench::ddp {

class CudaRuntime {
 public:
  using Stream = void*;  // cudaStream_t
  using Event = void*;   // cudaEvent_t
  using HostFn = void (*)(void*);

  // Throws std::runtime_error naming the missing function when libcudart is not loaded.
  static const CudaRuntime& get();

  void launch_host_func(Stream stream, HostFn fn, void* user_data) const;
  Event create_event() const;  // timing disabled
  void record_event(Event event, Stream stream) const;
  bool event_done(Event event) const;  // cudaEventQuery: true when complete
  void destroy_event(Event event) const;
  void synchronize(Stream stream) const;

 private:
  CudaRuntime() = default;
  void check(int rc, const char* what) const;

  int (*launch_host_func_)(Stream, HostFn, void*) = nullptr;
  int (*event_create_with_flags_)(Event*, unsigned) = nullptr;
  int (*event_record_)(Event, Stream) = nullptr;
  int (*event_query_)(Event) = nullptr;
  int (*event_destroy_)(Event) = nullptr;
  int (*stream_synchronize_)(Stream) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
};

}  // namespace hangbench::ddp
