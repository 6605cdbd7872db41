#include "hangbench/model.hpp"

namespace hangbench {

bool params_match(const std::map<std::string, std::string>& params, const std::map<std::string, std::string>& filter) {
  for (const auto& [axis, value] : filter) {
    auto found = params.find(axis);
    if (found == params.end() || found->second != value) return false;
  }
  return true;
}

}  // namespace hangbench
