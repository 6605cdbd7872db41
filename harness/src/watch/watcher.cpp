// The loop of `hangbench watch`, as small named steps: read the signals, note
// progress, and on a hang capture the evidence, announce it and act.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "hangbench/atomic_write.hpp"
#include "hangbench/watch.hpp"

namespace hangbench::watch {

Watcher::Watcher(WatchOptions options, Clock& clock, JobReader& reader, Capture& capture, JobControl& control)
    : options_(std::move(options)),
      clock_(clock),
      reader_(reader),
      capture_(capture),
      control_(control),
      tracker_(options_.signals, options_.idle_s) {}

WatchOutcome Watcher::run() {
  write_prometheus(nullptr, clock_.now());
  while (step()) {
  }
  outcome_.wait_status = control_.wait_status();
  return outcome_;
}

bool Watcher::step() {
  if (done_) return false;
  const double started = clock_.now();
  Sample s = read_signals();
  if (!s.alive) {
    done_ = true;
    return false;
  }
  note_progress(s);
  if (hang_detected(s.t)) capture_evidence(s, s.t);
  finish_actions(clock_.now());
  if (done_) return false;
  wait_for_next_poll(started);
  return true;
}

Sample Watcher::read_signals() { return reader_.read(clock_.now()); }

// The tracker learns the sample; a hang already announced that progresses again is
// closed (announced too), so a later stall is flagged again.
void Watcher::note_progress(const Sample& s) {
  const double before = tracker_.last_progress();
  tracker_.observe(s);
  if (hang_open_ && tracker_.last_progress() > before) {
    hang_open_ = false;
    nlohmann::json event = {
        {"event", "progress"}, {"job", options_.job}, {"t", clock_.unix_now()}, {"signals", tracker_.rule_signals()}};
    announce(event);
    write_prometheus(nullptr, s.t);
  }
}

bool Watcher::hang_detected(double now) { return !hang_open_ && tracker_.hung(now); }

// The evidence while the job is alive, then the event and the metrics file.
void Watcher::capture_evidence(const Sample& s, double now) {
  hang_open_ = true;
  nlohmann::json facts = {{"job", options_.job},
                          {"idle_s", options_.idle_s},
                          {"signals", tracker_.rule_signals()},
                          {"signals_option", to_string(options_.signals)},
                          {"seconds_since_progress", tracker_.seconds_since_progress(now)},
                          {"last_phase", s.last_phase}};
  nlohmann::json last = nlohmann::json::object();
  for (const auto& [signal, t] : tracker_.last_advance()) last[signal] = now - t;
  facts["seconds_since_each_signal"] = last;
  std::vector<int> pids = reader_.pids();
  HangEvidence e = capture_.capture(pids, facts);
  if (e.ranks.empty()) {
    for (const auto& [pid, rank] : s.ranks)
      if (rank >= 0) e.ranks.push_back(rank);
  }
  if (e.pids.empty()) e.pids = pids;
  outcome_.hung = true;
  announce(hang_event(options_, e, tracker_, now, clock_.unix_now()));
  write_prometheus(&e, now);
  act_on_hang();
}

void Watcher::announce(const nlohmann::json& event) {
  outcome_.events.push_back(event);
  const std::string line = event.dump() + "\n";
  if (options_.events_path.empty()) {
    std::fflush(stdout);
    // One write: the line never interleaves with another writer's.
    [[maybe_unused]] auto n = ::write(STDOUT_FILENO, line.data(), line.size());
    return;
  }
  std::ofstream out(options_.events_path, std::ios::app);
  out << line;
  if (!out) std::cerr << "hangbench watch: cannot append to " << options_.events_path << "\n";
}

void Watcher::write_prometheus(const HangEvidence* evidence, double now) {
  if (options_.prometheus_path.empty()) return;
  const double since = evidence ? tracker_.seconds_since_progress(now) : 0;
  try {
    write_file_atomically(options_.prometheus_path, prometheus_text(options_.job, evidence, since));
  } catch (const std::exception& e) {
    std::cerr << "hangbench watch: " << e.what() << "\n";
  }
}

void Watcher::act_on_hang() {
  switch (options_.on_hang) {
    case OnHang::Nothing:
      if (options_.exit_on_hang) done_ = true;
      break;
    case OnHang::Signal:
      control_.signal_launcher(options_.signal);
      if (options_.exit_on_hang) done_ = true;
      break;
    case OnHang::Kill:
      kill_at_ = clock_.now() + options_.kill_after_s;
      break;
  }
}

// A pending --kill-after whose time has come ends the tree (a job that progressed
// meanwhile is spared).
void Watcher::finish_actions(double now) {
  if (kill_at_ < 0) return;
  if (!hang_open_) {
    kill_at_ = -1;
    return;
  }
  if (now < kill_at_) return;
  kill_at_ = -1;
  control_.end_tree();
  outcome_.ended_by_watch = true;
  done_ = true;
}

void Watcher::wait_for_next_poll(double from) {
  double next = from + options_.poll_s;
  if (kill_at_ >= 0 && kill_at_ < next) next = kill_at_;
  clock_.sleep_until(next);
}

nlohmann::json hang_event(const WatchOptions& o, const HangEvidence& e, const ProgressTracker& t, double now,
                          double unix_now) {
  nlohmann::json j = {{"event", "hang"},
                      {"job", o.job},
                      {"t", unix_now},
                      {"shape", e.shape},
                      {"catalog_id", e.catalog_id},
                      {"seconds_since_progress", std::round(t.seconds_since_progress(now) * 10) / 10},
                      {"idle_s", o.idle_s},
                      {"signals", t.rule_signals()},
                      {"ranks", e.ranks},
                      {"pids", e.pids},
                      {"headline", e.headline},
                      {"evidence", o.evidence_dir},
                      {"files", e.files},
                      {"capture_s", std::round(e.seconds * 1000) / 1000}};
  if (!e.error.empty()) j["error"] = e.error;
  switch (o.on_hang) {
    case OnHang::Nothing:
      j["action"] = "none";
      break;
    case OnHang::Kill:
      j["action"] = fmt::format("kill-after {} s", o.kill_after_s);
      break;
    case OnHang::Signal:
      j["action"] = fmt::format("signal {}", o.signal);
      break;
  }
  return j;
}

namespace {

// A label value as the exposition format wants it: backslash, quote and newline escaped.
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string prometheus_text(const std::string& job, const HangEvidence* evidence, double seconds_since_progress) {
  const std::string j = label(job);
  std::string out;
  out += "# HELP hangbench_hang 1 while hangbench watch holds the job hung (no progress for --idle seconds)\n";
  out += "# TYPE hangbench_hang gauge\n";
  if (evidence) {
    out += fmt::format("hangbench_hang{{job=\"{}\",shape=\"{}\",catalog_id=\"{}\"}} 1\n", j, label(evidence->shape),
                       label(evidence->catalog_id));
  } else {
    out += fmt::format("hangbench_hang{{job=\"{}\",shape=\"\",catalog_id=\"\"}} 0\n", j);
  }
  out += "# HELP hangbench_seconds_since_progress seconds since a signal the rule reads last advanced, at the hang\n";
  out += "# TYPE hangbench_seconds_since_progress gauge\n";
  out += fmt::format("hangbench_seconds_since_progress{{job=\"{}\"}} {:.1f}\n", j, seconds_since_progress);
  out += "# HELP hangbench_hang_rank 1 for each rank the hang involves\n";
  out += "# TYPE hangbench_hang_rank gauge\n";
  if (evidence) {
    for (int rank : evidence->ranks) out += fmt::format("hangbench_hang_rank{{job=\"{}\",rank=\"{}\"}} 1\n", j, rank);
  }
  return out;
}

}  // namespace hangbench::watch
