#include "hangbench/executor.hpp"

namespace hangbench {

void LivePhaseTimeouts::lower(const std::string& phase, double seconds, const std::string& why) {
  std::lock_guard lock(mutex_);
  auto it = lowered_.find(phase);
  if (it != lowered_.end() && it->second.seconds <= seconds) return;
  lowered_[phase] = {seconds, why};
  ++version_;
}

std::optional<LivePhaseTimeouts::Lowered> LivePhaseTimeouts::get(const std::string& phase) const {
  std::lock_guard lock(mutex_);
  auto it = lowered_.find(phase);
  if (it == lowered_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, double> LivePhaseTimeouts::applied_to(const std::map<std::string, double>& timeouts) const {
  std::lock_guard lock(mutex_);
  std::map<std::string, double> out = timeouts;
  for (auto& [phase, seconds] : out) {
    if (auto it = lowered_.find(phase); it != lowered_.end() && it->second.seconds < seconds)
      seconds = it->second.seconds;
  }
  return out;
}

}  // namespace hangbench
