#include "exec/phase_reader.hpp"

#include <fstream>
#include <iterator>
#include <limits>

namespace hangbench::exec_detail {

std::optional<PhaseEvent> phase_event(const nlohmann::json& j) {
  if (!j.contains("phase") || !j["phase"].is_string()) return std::nullopt;
  PhaseEvent p;
  p.name = j["phase"].get<std::string>();
  if (j.contains("t") && j["t"].is_number()) p.t = j["t"].get<double>();
  if (j.contains("pid") && j["pid"].is_number_integer()) p.pid = j["pid"].get<int>();
  if (j.contains("rank") && j["rank"].is_number_integer()) p.rank = j["rank"].get<int>();
  if (j.contains("host") && j["host"].is_string()) p.host = j["host"].get<std::string>();
  return p;
}

PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn) {
  PhaseLog log;
  std::ifstream in(path);
  int line_no = 0;
  int malformed = 0, first_malformed = 0;  // one warning per file, however much garbage it holds
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (malformed++ == 0) first_malformed = line_no;
      continue;
    }
    if (auto p = phase_event(j)) {
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

std::vector<PhaseEvent> PhaseFollower::poll() {
  std::vector<PhaseEvent> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(offset_);
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += static_cast<long long>(chunk.size());
  partial_ += chunk;
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    auto j = nlohmann::json::parse(partial_.substr(start, nl - start), nullptr, false);
    if (auto p = j.is_object() ? phase_event(j) : std::nullopt; p && j["t"].is_number()) out.push_back(std::move(*p));
  }
  partial_.erase(0, start);
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
