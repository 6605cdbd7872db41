// Holm's step-down adjustment for the comparisons of one run.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

std::vector<size_t> ascending_order(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return values[x] < values[y]; });
  return order;
}

}  // namespace

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const auto order = ascending_order(p);
  std::vector<double> adjusted(p.size());
  double running_max = 0;
  for (size_t rank = 0; rank < order.size(); ++rank) {
    double scaled = static_cast<double>(p.size() - rank) * p[order[rank]];
    running_max = std::max(running_max, std::min(1.0, scaled));
    adjusted[order[rank]] = running_max;
  }
  return adjusted;
}

std::vector<double> holm_adjust_log10(const std::vector<double>& log10_p) {
  const auto order = ascending_order(log10_p);
  std::vector<double> adjusted(log10_p.size());
  double running_max = -std::numeric_limits<double>::infinity();
  for (size_t rank = 0; rank < order.size(); ++rank) {
    double scaled = std::log10(static_cast<double>(log10_p.size() - rank)) + log10_p[order[rank]];
    running_max = std::max(running_max, std::min(0.0, scaled));
    adjusted[order[rank]] = running_max;
  }
  return adjusted;
}

}  // namespace hangbench::stats
