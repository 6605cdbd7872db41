#include "exec/phase_reader.hpp"

#include <fstream>

namespace hangbench::exec_detail {

PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn) {
  PhaseLog log;
  std::ifstream in(path);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (warn) warn(path + ":" + std::to_string(line_no) + ": malformed phase line ignored");
      continue;
    }
    if (j.contains("phase") && j["phase"].is_string()) {
      PhaseEvent p;
      p.name = j["phase"].get<std::string>();
      if (j.contains("t") && j["t"].is_number()) p.t = j["t"].get<double>();
      if (j.contains("pid") && j["pid"].is_number_integer()) p.pid = j["pid"].get<int>();
      if (j.contains("rank") && j["rank"].is_number_integer()) p.rank = j["rank"].get<int>();
      log.phases.push_back(std::move(p));
      continue;
    }
    // Metrics: {"metric": name, "value": v, ...} keyed by name; repeated names (one
    // per rank, say) collect into an array. Other objects are kept under "events".
    if (j.contains("metric") && j["metric"].is_string()) {
      std::string name = j["metric"].get<std::string>();
      nlohmann::json value = j.contains("value") ? j["value"] : nlohmann::json(nullptr);
      auto& slot = log.metrics[name];
      if (slot.is_null()) slot = value;
      else if (slot.is_array() && log.metrics.contains("__array_" + name)) slot.push_back(value);
      else {
        slot = nlohmann::json::array({slot, value});
        log.metrics["__array_" + name] = true;
      }
      continue;
    }
    log.metrics["events"].push_back(j);
  }
  // The markers above only told repeated scalars from genuine array values.
  for (auto it = log.metrics.begin(); it != log.metrics.end();) {
    if (it.key().rfind("__array_", 0) == 0) it = log.metrics.erase(it);
    else ++it;
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
