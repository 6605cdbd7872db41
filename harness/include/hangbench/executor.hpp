// Runs one trial of one cell and says how it ended. The scheduler only knows this
// interface, so tests can swap the real process executor for a scripted fake.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/hang_capture.hpp"
#include "hangbench/model.hpp"

namespace hangbench {

namespace exec_detail {
class TrialWatcher;
}

// Phase timeouts that a run may lower while it is under way, for every trial in
// flight and to come: validate learns its teardown deadline from the fixed
// reference's healthy teardowns as soon as they have all ended. Never raised.
// Thread-safe.
class LivePhaseTimeouts {
 public:
  struct Lowered {
    double seconds = 0;
    std::string why;  // in words, for the hang's record
  };
  // Lowers `phase`'s timeout to `seconds` unless it is already that low.
  void lower(const std::string& phase, double seconds, const std::string& why);
  std::optional<Lowered> get(const std::string& phase) const;
  // `timeouts` with each phase lowered where this holds a lower value.
  std::map<std::string, double> applied_to(const std::map<std::string, double>& timeouts) const;
  // Changes each time a timeout is lowered: a waiting trial re-reads only then.
  int version() const { return version_.load(); }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Lowered> lowered_;
  std::atomic<int> version_{0};
};

// Stacks for one hung trial per cell (a matrix's stacks = "first-hang"): shared by
// the run's trials, the first hang of a cell to reach capture takes it.
class StackBudget {
 public:
  bool take(const std::string& cell_id) {
    std::lock_guard lock(mutex_);
    return taken_.insert(cell_id).second;
  }

 private:
  std::mutex mutex_;
  std::set<std::string> taken_;
};

struct TrialContext {
  std::string run_dir;                           // absolute; trials go under <run_dir>/trials/
  std::string run_id;                            // trials/<run id>/<cell folder>/<index>: no two runs share one
  std::string trial_id;                          // unique tag; "" = the executor makes one
  double grace_s = 2.0;                          // SIGTERM -> SIGKILL at cleanup
  bool capture_stacks = false;                   // debugger stacks in the hang evidence
  std::shared_ptr<StackBudget> stack_budget;     // set: stacks for the first hang of each cell only
  const std::atomic<bool>* cancel = nullptr;     // set when the harness is told to stop
  std::function<void(const std::string&)> warn;  // non-fatal problems (malformed phase lines, ...)
  // The run's provenance (provenance_json of the run), written into each hung
  // trial's evidence.json; null when the caller has none.
  std::shared_ptr<const nlohmann::json> provenance;
  // Lowered phase timeouts shared by the run's trials; null = the cells' own.
  std::shared_ptr<const LivePhaseTimeouts> live_timeouts;
  // Told when the trial's deadline passes: it is being called hung and its
  // evidence captured (the run's progress counts it); may be empty.
  std::function<void()> on_deadline;
  // Told when a phase the workload reported brings the trial's deadline closer
  // than its whole-trial timeout: the seconds left until it (the run's ETA uses
  // it); may be empty.
  std::function<void(double seconds_left)> on_deadline_moved;
};

// infra_error of a trial that was cut short because the harness was stopped; such
// trials are not recorded, so --resume runs them again.
inline constexpr const char* kInterruptedError = "interrupted: the harness was stopped";
inline bool was_interrupted(const TrialResult& r) {
  return r.outcome == Outcome::Infra && r.infra_error == kInterruptedError;
}

class TrialExecutor {
 public:
  virtual ~TrialExecutor() = default;
  virtual TrialResult run(const Cell& cell, int index, const TrialContext& ctx) = 0;
};

// Real child processes: own session and process group, per-trial cgroup v2 where
// allowed, the harness as child subreaper, evidence on HANG through `capture`
// (none when null), full cleanup after.
// A watcher process ends the trials in flight should the harness die
// (docs/lifecycle.md).
class ProcessExecutor : public TrialExecutor {
 public:
  // Makes this process a child subreaper (once per process), forks the watcher.
  explicit ProcessExecutor(std::shared_ptr<const HangCapture> capture);
  ~ProcessExecutor() override;
  TrialResult run(const Cell& cell, int index, const TrialContext& ctx) override;
  bool cgroups_available() const { return cgroup_root_ != ""; }
  const std::string& cgroup_root() const { return cgroup_root_; }
  int watcher_pid() const;                                // -1 when the watcher could not be started
  bool pid_namespaces() const { return pid_namespace_; }  // each trial in its own PID namespace

 private:
  std::string cgroup_root_;  // writable cgroup v2 folder for per-trial groups, or ""
  bool pid_namespace_ = false;
  std::unique_ptr<exec_detail::TrialWatcher> watcher_;
  std::shared_ptr<const HangCapture> capture_;
};

// Scripted outcomes for tests: deterministic, no processes.
class FakeExecutor : public TrialExecutor {
 public:
  using Script = std::function<TrialResult(const Cell&, int index)>;
  explicit FakeExecutor(Outcome default_outcome = Outcome::Passed);
  explicit FakeExecutor(Script script);
  // Outcome for one (cell id, index); overrides the default.
  void set(const std::string& cell_id, int index, Outcome outcome);
  TrialResult run(const Cell& cell, int index, const TrialContext& ctx) override;
  // Every (cell id, index) run so far, in call order.
  std::vector<std::pair<std::string, int>> calls() const;

 private:
  Outcome default_outcome_;
  Script script_;
  std::map<std::pair<std::string, int>, Outcome> scripted_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, int>> calls_;
};

}  // namespace hangbench
