// When to run the native progress thread, and the guarantee that it stops
// before MPI_Finalize on every exit path:
//   - normal shutdown            -> ProgressLifecycle::stop_for_shutdown()
//   - the hang-detected path     -> ProgressLifecycle::stop_for_hang()
//   - exit() without either      -> one atexit handler that stops every thread
//                                   still registered (a thread leaves the
//                                   registry, by identity, once stopped, so the
//                                   fallback never touches a stopped or freed one)
#pragma once

#include <mpi.h>

#include <chrono>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>

#include "mpi_progress_thread.hpp"
#include "progress_interval.hpp"

namespace hangbench::mpi_progress {

struct StartConditions {
  int pipeline_stages = 1;  // ranks in the pipeline; one stage sends nothing
  bool mpi_enabled = false;
  IntervalSetting interval;
  int provided_thread_level = MPI_THREAD_SINGLE;  // from MPI_Query_thread
};

enum class StartDecision { Start, SingleStage, MpiDisabled, IntervalDisabled, ThreadLevelTooLow };
std::string to_string(StartDecision d);

// Pure: which of the conditions (checked in this order) keeps the thread off.
StartDecision decide_start(const StartConditions& conditions);

enum class StopPath { NotStopped, Shutdown, HangDetected, AtexitFallback };
std::string to_string(StopPath p);

class ProgressLifecycle {
 public:
  // Starts the thread when decide_start() says so and registers it for the
  // atexit fallback; otherwise stays idle. `log` receives one line saying why.
  ProgressLifecycle(const StartConditions& conditions, MPI_Comm comm, std::ostream& log,
                    int reserved_tag = kReservedProbeTag);
  ~ProgressLifecycle();  // stops (as Shutdown) if still running
  ProgressLifecycle(const ProgressLifecycle&) = delete;
  ProgressLifecycle& operator=(const ProgressLifecycle&) = delete;

  void stop_for_shutdown() { stop_via(StopPath::Shutdown); }
  void stop_for_hang() { stop_via(StopPath::HangDetected); }
  // Stops the thread (if started and still running), records the first path
  // that did, and leaves the atexit registry. Idempotent, thread-safe.
  void stop_via(StopPath path);

  StartDecision decision() const { return decision_; }
  bool started() const { return thread_ != nullptr; }
  bool is_running() const;
  std::uint64_t probe_count() const;
  // The first path that stopped the thread (AtexitFallback when the fallback did).
  StopPath stopped_by() const;
  MpiProgressThread* thread() { return thread_.get(); }

 private:
  StartDecision decision_;
  std::unique_ptr<MpiProgressThread> thread_;
  mutable std::mutex stop_mutex_;
  StopPath stopped_by_ = StopPath::NotStopped;
};

namespace atexit_fallback {
// Threads the atexit handler would stop now (for tests and logs).
std::size_t registered_count();
// What the atexit handler runs; callable directly so tests can exercise it.
// Returns how many threads it stopped.
std::size_t stop_all_registered();
}  // namespace atexit_fallback

}  // namespace hangbench::mpi_progress
