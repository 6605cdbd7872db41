#include "exec/phase_reader.hpp"

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

namespace hangbench::exec_detail {

std::string phase_line_out_of_bounds(std::string_view line) {
  if (line.size() > kMaxPhaseLineBytes) {
    return "longer than " + std::to_string(kMaxPhaseLineBytes / 1024) + " KiB (" + std::to_string(line.size()) +
           " bytes)";
  }
  // Nesting depth outside strings: the parser and the serializer recurse once per level.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : line) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxPhaseLineDepth) {
        return "nested deeper than " + std::to_string(kMaxPhaseLineDepth) + " levels";
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return "";
}

bool clamp_phase_time(PhaseEvent& p, double lo, double hi) {
  if (!(hi > 0)) return false;
  const double slack = 1.0;  // a second of ordinary drift between hosts is not worth a word
  double t = p.t;
  if (!(t >= lo)) t = lo;  // NaN too
  if (t > hi) t = hi;
  bool skewed = !(std::abs(t - p.t) <= slack);
  p.t = t;
  return skewed;
}

std::optional<PhaseEvent> phase_event(const nlohmann::json& j) {
  if (!j.contains("phase") || !j["phase"].is_string()) return std::nullopt;
  PhaseEvent p;
  p.name = j["phase"].get<std::string>();
  if (j.contains("t") && j["t"].is_number()) p.t = j["t"].get<double>();
  if (!std::isfinite(p.t)) p.t = 0;
  if (j.contains("pid") && j["pid"].is_number_integer()) p.pid = j["pid"].get<int>();
  if (j.contains("rank") && j["rank"].is_number_integer()) p.rank = j["rank"].get<int>();
  if (j.contains("host") && j["host"].is_string()) p.host = j["host"].get<std::string>();
  return p;
}

PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn, double earliest,
                         double latest) {
  PhaseLog log;
  std::ifstream in(path);
  int line_no = 0;
  int malformed = 0, first_malformed = 0;  // one warning per file, however much garbage it holds
  std::string first_bound;                 // why the first line out of bounds was not parsed
  int out_of_bounds = 0, first_out_of_bounds = 0, skewed = 0, first_skewed = 0;
  long long bytes = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    bytes += static_cast<long long>(line.size()) + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string bound = bytes > kMaxPhaseFileBytes
                            ? "past the file's bound of " + std::to_string(kMaxPhaseFileBytes / (1024 * 1024)) + " MiB"
                            : phase_line_out_of_bounds(line);
    if (!bound.empty()) {
      if (out_of_bounds++ == 0) {
        first_out_of_bounds = line_no;
        first_bound = bound;
      }
      continue;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (malformed++ == 0) first_malformed = line_no;
      continue;
    }
    if (auto p = phase_event(j)) {
      if (clamp_phase_time(*p, earliest, latest) && skewed++ == 0) first_skewed = line_no;
      log.phases.push_back(std::move(*p));
      continue;
    }
    // Metrics: {"metric": name, "value": v, ...} keyed by name; repeated names (one
    // per rank, say) collect into an array. Other objects are kept under "events".
    if (j.contains("metric") && j["metric"].is_string()) {
      std::string name = j["metric"].get<std::string>();
      nlohmann::json value = j.contains("value") ? j["value"] : nlohmann::json(nullptr);
      auto& slot = log.metrics[name];
      if (slot.is_null())
        slot = value;
      else if (slot.is_array() && log.metrics.contains("__array_" + name))
        slot.push_back(value);
      else {
        slot = nlohmann::json::array({slot, value});
        log.metrics["__array_" + name] = true;
      }
      continue;
    }
    log.metrics["events"].push_back(j);
  }
  if (malformed > 0 && warn) {
    warn(path + ":" + std::to_string(first_malformed) + ": malformed phase line ignored" +
         (malformed > 1 ? ", and " + std::to_string(malformed - 1) + " more after it" : ""));
  }
  if (out_of_bounds > 0 && warn) {
    warn(path + ":" + std::to_string(first_out_of_bounds) + ": phase line ignored unparsed (" + first_bound + ")" +
         (out_of_bounds > 1 ? ", and " + std::to_string(out_of_bounds - 1) + " more after it" : ""));
  }
  if (skewed > 0 && warn) {
    warn(path + ":" + std::to_string(first_skewed) +
         ": phase time outside the trial's lifetime as the harness saw it (a skewed clock?); clamped to it" +
         (skewed > 1 ? ", and " + std::to_string(skewed - 1) + " more after it" : ""));
  }
  // The markers above only told repeated scalars from genuine array values.
  for (auto it = log.metrics.begin(); it != log.metrics.end();) {
    if (it.key().rfind("__array_", 0) == 0)
      it = log.metrics.erase(it);
    else
      ++it;
  }
  return log;
}

std::string last_phase_before(const std::vector<PhaseEvent>& phases, double deadline) {
  const PhaseEvent* last = nullptr;
  for (const auto& p : phases) {
    if (p.t <= deadline && (!last || p.t >= last->t)) last = &p;
  }
  return last ? last->name : "";
}

}  // namespace hangbench::exec_detail

namespace hangbench::exec_detail {

std::vector<PhaseEvent> PhaseFollower::poll(double now) {
  std::vector<PhaseEvent> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(offset_);
  // A bounded read per poll: a flood without newlines cannot grow what we hold.
  std::string chunk(16 * (kMaxPhaseLineBytes + 1), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  offset_ += static_cast<long long>(chunk.size());
  partial_ += chunk;
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(partial_.data() + start, nl - start);
    if (skipping_) {  // the tail of a line that was already too long
      skipping_ = false;
      continue;
    }
    if (!phase_line_out_of_bounds(line).empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (auto p = j.is_object() ? phase_event(j) : std::nullopt; p && j["t"].is_number()) {
      clamped_ += clamp_phase_time(*p, last_poll_, now);
      out.push_back(std::move(*p));
    }
  }
  partial_.erase(0, start);
  if (partial_.size() > kMaxPhaseLineBytes) {
    partial_.clear();
    skipping_ = true;
  }
  last_poll_ = now;
  return out;
}

double phase_deadline(const std::vector<PhaseEvent>& phases, const std::map<std::string, double>& timeouts,
                      std::string* which) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : phases) {
    auto it = timeouts.find(p.name);
    if (it == timeouts.end() || !(p.t + it->second < best)) continue;
    best = p.t + it->second;
    if (which) *which = p.name;
  }
  return best;
}

}  // namespace hangbench::exec_detail
