// Reads a trial's phases.jsonl (workloads/common/phase.hpp): phase lines become
// PhaseEvents, every other line becomes a metric. Malformed lines (and lines over
// the size or depth bound, checked before they are parsed) are skipped with one
// warning per file naming the first file:line and how many there were; they never
// fail the trial, and nothing a workload writes can crash the harness.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench::exec_detail {

struct PhaseLog {
  std::vector<PhaseEvent> phases;  // in file order
  nlohmann::json metrics = nlohmann::json::object();
};

// Bounds on one line, checked before it is parsed: the parser and the serializer
// recurse per level of nesting, and a row must stay small.
inline constexpr size_t kMaxPhaseLineBytes = 64 * 1024;
inline constexpr int kMaxPhaseLineDepth = 32;
// Bytes of one phase file read after the trial; what follows is counted, not parsed.
inline constexpr long long kMaxPhaseFileBytes = 16LL * 1024 * 1024;

// The phase file opened for reading: a regular file, never through a link, never
// waiting for a FIFO's writer; -1 otherwise, with `why` ("" when it does not exist).
int open_phase_file(const std::string& path, std::string* why);

// Why `line` is not parsed at all ("" when it is within the bounds).
std::string phase_line_out_of_bounds(std::string_view line);

// A phase line ({"phase": name, "t": unix seconds, "pid", "rank"}) as a PhaseEvent; nullopt for other lines.
std::optional<PhaseEvent> phase_event(const nlohmann::json& j);

// Phase times outside [earliest, latest] (the trial's lifetime as the harness saw
// it) are clamped into it; `clamped` counts them (a skewed clock on some rank).
PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn,
                         double earliest = 0, double latest = 0);

// Name of the last phase that started at or before `deadline` (unix seconds), or "".
std::string last_phase_before(const std::vector<PhaseEvent>& phases, double deadline);

}  // namespace hangbench::exec_detail

namespace hangbench::exec_detail {

// Follows a running trial's phase file: each poll() returns the phase lines
// completed since the previous one (a line still being written waits). A line
// appeared between the previous poll and this one, so its time is clamped into
// that window: a rank whose clock is skewed cannot set a deadline in the past.
class PhaseFollower {
 public:
  explicit PhaseFollower(std::string path, double since = 0) : path_(std::move(path)), last_poll_(since) {}
  std::vector<PhaseEvent> poll(double now);
  int clamped() const { return clamped_; }

 private:
  std::string path_;
  long long offset_ = 0;
  std::string partial_;
  double last_poll_;
  int clamped_ = 0;
  bool skipping_ = false;
};

// Clamps p.t into [lo, hi] (when hi > 0); true when it moved by more than the slack.
bool clamp_phase_time(PhaseEvent& p, double lo, double hi);

// The earliest phase-relative deadline (unix seconds) the phases seen so far set,
// or +infinity; `which` gets the phase that set it.
double phase_deadline(const std::vector<PhaseEvent>& phases, const std::map<std::string, double>& timeouts,
                      std::string* which = nullptr);

}  // namespace hangbench::exec_detail
