// Where the service loop runs: a thread of the rank (NCCL's layout: the rank's
// self-connection goes through the kernel to its own thread, and commFree
// pthread_join()s it), or a separate process (the seed's demo layout, waited
// for with waitpid). The abort flag lives in shared memory for both.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>

#include "service_loop.hpp"
#include "tcp_socket.hpp"

namespace socket_teardown {

enum class Topology { Thread, Process };

// An int in MAP_SHARED memory, visible to forked processes: comm->abortFlag.
class SharedAbortFlag {
 public:
  SharedAbortFlag();
  ~SharedAbortFlag();
  SharedAbortFlag(const SharedAbortFlag&) = delete;
  SharedAbortFlag& operator=(const SharedAbortFlag&) = delete;
  void raise() { flag_->store(1); }
  const std::atomic<int>* get() const { return flag_; }

 private:
  std::atomic<int>* flag_;
};

class ServiceHost {
 public:
  virtual ~ServiceHost() = default;
  // Waits up to `timeout_ms` for the service loop to end; true once it has.
  virtual bool wait_for_exit(int timeout_ms) = 0;
  // pthread_join / waitpid; returns 0 when the loop ended without error.
  virtual int join() = 0;
  // The service's process (the rank's own pid for the thread topology).
  virtual pid_t pid() const = 0;
};

// Starts the loop on `listener` (whose descriptor the host takes over).
std::unique_ptr<ServiceHost> start_service(Topology topology, Listener listener, const SharedAbortFlag& abort_flag,
                                           ServiceOptions options, ServiceHooks hooks);

}  // namespace socket_teardown
