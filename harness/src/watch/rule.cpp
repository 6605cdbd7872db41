// The detection rule: which signals count as progress, and when they last advanced.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "hangbench/watch.hpp"

namespace hangbench::watch {

SignalSet parse_signals(const std::string& text) {
  SignalSet s;
  if (text.empty() || text == "auto") return s;
  s.automatic = false;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    if (word == "phase")
      s.phase = true;
    else if (word == "output")
      s.output = true;
    else if (word == "cpu")
      s.cpu = true;
    else if (word == "gpu")
      s.gpu = true;
    else if (word == "fr")
      s.fr = true;
    else
      throw std::invalid_argument("--signals: unknown signal '" + word +
                                  "' (auto, or a comma-separated list of phase, fr, output, cpu, gpu)");
  }
  if (!s.phase && !s.output && !s.cpu && !s.gpu && !s.fr) throw std::invalid_argument("--signals: no signal named");
  return s;
}

std::string to_string(const SignalSet& s) {
  if (s.automatic) return "auto";
  std::string out;
  auto add = [&](bool on, const char* word) {
    if (on) out += (out.empty() ? "" : ",") + std::string(word);
  };
  add(s.phase, "phase");
  add(s.fr, "fr");
  add(s.output, "output");
  add(s.cpu, "cpu");
  add(s.gpu, "gpu");
  return out;
}

ProgressTracker::ProgressTracker(SignalSet signals, double idle_s) : signals_(signals), idle_s_(idle_s) {}

bool ProgressTracker::advanced(const std::string& signal, double t) {
  last_[signal] = t;
  return true;
}

namespace {

// Some rank's CPU time grew by at least kCpuBusyShare of the wall time between the samples.
bool cpu_advanced(const Sample& before, const Sample& now) {
  const double wall = now.t - before.t;
  if (wall <= 0) return false;
  for (const auto& [pid, seconds] : now.cpu_s) {
    auto it = before.cpu_s.find(pid);
    if (it != before.cpu_s.end() && seconds - it->second >= kCpuBusyShare * wall) return true;
  }
  return false;
}

// Some rank's last completed collective is newer than before.
bool fr_advanced(const Sample& before, const Sample& now) {
  for (const auto& [pid, seq] : now.fr_completed) {
    auto it = before.fr_completed.find(pid);
    if (it != before.fr_completed.end() && seq > it->second) return true;
  }
  return false;
}

}  // namespace

void ProgressTracker::observe(const Sample& s) {
  if (!started_) {
    started_ = true;
    first_t_ = s.t;
  }
  if (previous_) {
    const Sample& p = *previous_;
    if (s.phase_lines > p.phase_lines && p.phase_lines >= 0) advanced("phase", s.t);
    if (s.phase_lines > 0 && p.phase_lines < 0) advanced("phase", s.t);
    if (s.output_bytes > p.output_bytes && p.output_bytes >= 0) advanced("output", s.t);
    if (cpu_advanced(p, s)) advanced("cpu", s.t);
    if (fr_advanced(p, s)) advanced("fr", s.t);
  }
  if (s.gpu_busy.value_or(false)) advanced("gpu", s.t);
  if (s.phase_lines > 0) phase_seen_ = true;
  if (!s.fr_completed.empty()) fr_seen_ = true;
  if (s.fr_configured > 0) fr_expected_ = true;
  previous_ = s;
}

std::vector<std::string> ProgressTracker::rule_signals() const {
  std::vector<std::string> out;
  if (signals_.automatic) {
    // A rank with the Flight Recorder on says itself when it completes a collective,
    // even before its first answer: CPU and GPU activity would hide a collective that
    // spins, and a rank that cannot dump at all (the GIL held) must not hide behind them.
    if (!phase_seen_ && !fr_seen_ && !fr_expected_) return {"output", "cpu", "gpu"};
    if (phase_seen_) out.push_back("phase");
    if (fr_seen_ || fr_expected_) out.push_back("fr");
    out.push_back("output");
    return out;
  }
  if (signals_.phase) out.push_back("phase");
  if (signals_.fr) out.push_back("fr");
  if (signals_.output) out.push_back("output");
  if (signals_.cpu) out.push_back("cpu");
  if (signals_.gpu) out.push_back("gpu");
  // A job that has not touched the GPU yet is starting (importing, rendezvous), not
  // stalled: until its first GPU use, its output and CPU count too (seen on the H100: a
  // healthy job flagged by `--signals gpu` while its ranks still imported torch).
  if (signals_.gpu && !last_.count("gpu")) {
    for (const char* starting : {"output", "cpu"})
      if (std::find(out.begin(), out.end(), starting) == out.end()) out.push_back(starting);
  }
  return out;
}

double ProgressTracker::last_progress() const {
  double latest = first_t_;
  for (const auto& signal : rule_signals()) {
    auto it = last_.find(signal);
    if (it != last_.end() && it->second > latest) latest = it->second;
  }
  return latest;
}

}  // namespace hangbench::watch
