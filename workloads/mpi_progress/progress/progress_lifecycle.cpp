#include "progress_lifecycle.hpp"

#include <cstdlib>
#include <ostream>
#include <set>
#include <vector>

namespace hangbench::mpi_progress {

namespace {

// The registry the one atexit handler walks. Process-global because atexit
// is: C++ cannot unregister an atexit callable, so the handler stays and a
// stopped lifecycle leaves the registry instead. Recursive because the walk
// calls stop_via(), which unregisters.
struct AtexitRegistry {
  std::recursive_mutex mutex;
  std::set<ProgressLifecycle*> live;
};

AtexitRegistry& registry() {
  static auto* r = new AtexitRegistry;  // never destroyed: must outlive static destructors
  return *r;
}

extern "C" void stop_registered_at_exit() { atexit_fallback::stop_all_registered(); }

void register_for_atexit(ProgressLifecycle* lifecycle) {
  static std::once_flag installed;
  std::call_once(installed, [] { std::atexit(stop_registered_at_exit); });
  std::lock_guard<std::recursive_mutex> lock(registry().mutex);
  registry().live.insert(lifecycle);
}

void unregister_for_atexit(ProgressLifecycle* lifecycle) {
  std::lock_guard<std::recursive_mutex> lock(registry().mutex);
  registry().live.erase(lifecycle);
}

}  // namespace

namespace atexit_fallback {

std::size_t registered_count() {
  std::lock_guard<std::recursive_mutex> lock(registry().mutex);
  return registry().live.size();
}

std::size_t stop_all_registered() {
  std::lock_guard<std::recursive_mutex> lock(registry().mutex);
  const std::vector<ProgressLifecycle*> snapshot(registry().live.begin(), registry().live.end());
  for (ProgressLifecycle* lifecycle : snapshot) lifecycle->stop_via(StopPath::AtexitFallback);
  return snapshot.size();
}

}  // namespace atexit_fallback

std::string to_string(StartDecision d) {
  switch (d) {
    case StartDecision::Start:
      return "start";
    case StartDecision::SingleStage:
      return "single-stage";
    case StartDecision::MpiDisabled:
      return "mpi-disabled";
    case StartDecision::IntervalDisabled:
      return "interval-disabled";
    case StartDecision::ThreadLevelTooLow:
      return "thread-level-too-low";
  }
  return "unknown";
}

std::string to_string(StopPath p) {
  switch (p) {
    case StopPath::NotStopped:
      return "not-stopped";
    case StopPath::Shutdown:
      return "shutdown";
    case StopPath::HangDetected:
      return "hang-detected";
    case StopPath::AtexitFallback:
      return "atexit-fallback";
  }
  return "unknown";
}

StartDecision decide_start(const StartConditions& c) {
  if (c.pipeline_stages <= 1) return StartDecision::SingleStage;
  if (!c.mpi_enabled) return StartDecision::MpiDisabled;
  if (!c.interval.enabled()) return StartDecision::IntervalDisabled;
  if (c.provided_thread_level != MPI_THREAD_MULTIPLE) return StartDecision::ThreadLevelTooLow;
  return StartDecision::Start;
}

ProgressLifecycle::ProgressLifecycle(const StartConditions& conditions, MPI_Comm comm, std::ostream& log,
                                     int reserved_tag)
    : decision_(decide_start(conditions)) {
  if (decision_ != StartDecision::Start) {
    log << (decision_ == StartDecision::ThreadLevelTooLow ? "error" : "info")
        << ": MPI progress thread not started: " << to_string(decision_) << "\n";
    return;
  }
  thread_ = std::make_unique<MpiProgressThread>(comm, conditions.interval.interval, reserved_tag);
  register_for_atexit(this);
  log << "info: MPI progress thread started, interval " << conditions.interval.interval.count() << " us, tag "
      << reserved_tag << "\n";
}

ProgressLifecycle::~ProgressLifecycle() {
  stop_via(StopPath::Shutdown);
  unregister_for_atexit(this);
}

void ProgressLifecycle::stop_via(StopPath path) {
  if (!thread_) return;
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (stopped_by_ == StopPath::NotStopped) stopped_by_ = path;
  }
  thread_->stop();
  unregister_for_atexit(this);
}

bool ProgressLifecycle::is_running() const { return thread_ && thread_->is_running(); }

std::uint64_t ProgressLifecycle::probe_count() const { return thread_ ? thread_->probe_count() : 0; }

StopPath ProgressLifecycle::stopped_by() const {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  return stopped_by_;
}

}  // namespace hangbench::mpi_progress
