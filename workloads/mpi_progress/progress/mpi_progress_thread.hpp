// A native MPI progress thread: enters MPI every interval with a plain
// MPI_Iprobe on a reserved tag, so that outstanding nonblocking operations
// (a rendezvous send waiting for its sender to re-enter MPI) keep moving
// while every other thread of the process is blocked, including threads
// blocked behind the Python GIL. It never calls Python or any callback, and
// never MPI_Improbe/MPI_Mprobe (a matched probe would claim a message that
// belongs to the application).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <thread>

namespace hangbench::mpi_progress {

// The tag the thread probes. No application traffic may use it, so a probe
// is always a miss whose only effect is to drive MPI progress.
inline constexpr int kReservedProbeTag = 32000;

class MpiProgressThread {
 public:
  // Starts the worker at once. Throws std::invalid_argument when interval <= 0.
  // The caller must have checked MPI_THREAD_MULTIPLE (see start_if_supported).
  MpiProgressThread(MPI_Comm comm, std::chrono::microseconds interval, int reserved_tag = kReservedProbeTag);
  ~MpiProgressThread();  // calls stop()
  MpiProgressThread(const MpiProgressThread&) = delete;
  MpiProgressThread& operator=(const MpiProgressThread&) = delete;

  // Checks MPI_Query_thread() == MPI_THREAD_MULTIPLE; below it, writes an
  // error line to `log` and returns nullptr (progress stays disabled).
  // Throws std::invalid_argument when interval <= 0, like the constructor.
  static std::unique_ptr<MpiProgressThread> start_if_supported(MPI_Comm comm, std::chrono::microseconds interval,
                                                               std::ostream& log, int reserved_tag = kReservedProbeTag);

  // Idempotent and safe from several threads at once: the first caller sets
  // the flag and wakes the worker; callers are serialised on the join, and
  // every caller returns only after the worker has exited. Must run before
  // MPI_Finalize.
  void stop();

  bool is_running() const;            // false once the worker has exited
  std::uint64_t probe_count() const;  // MPI_Iprobe calls made so far
  std::chrono::microseconds interval() const { return interval_; }
  std::thread::native_handle_type native_handle();  // for CPU-time measurement

 private:
  void run();

  const MPI_Comm comm_;
  const std::chrono::microseconds interval_;
  const int reserved_tag_;

  std::mutex flag_mutex_;  // guards stop_requested_ and the condvar wait
  std::condition_variable wake_;
  bool stop_requested_ = false;

  std::mutex join_mutex_;  // serialises join() among stop() callers
  std::thread worker_;

  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> probe_count_{0};
};

}  // namespace hangbench::mpi_progress
