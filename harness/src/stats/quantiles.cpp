// Order-statistic summaries (Hyndman-Fan type 7, numpy's default).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const size_t below = static_cast<size_t>(std::floor(h));
  if (below + 1 >= sorted.size()) return sorted.back();
  return sorted[below] + (h - static_cast<double>(below)) * (sorted[below + 1] - sorted[below]);
}

}  // namespace

double quantile_type7(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile level must lie in [0, 1]");
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, q);
}

Quantiles summarize_quantiles(const std::vector<double>& values) {
  Quantiles out;
  if (values.empty()) return out;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  out.n = static_cast<int>(sorted.size());
  out.min = sorted.front();
  out.max = sorted.back();
  out.p50 = sorted_quantile(sorted, 0.5);
  out.p90 = sorted_quantile(sorted, 0.9);
  out.p99 = sorted_quantile(sorted, 0.99);
  return out;
}

}  // namespace hangbench::stats
