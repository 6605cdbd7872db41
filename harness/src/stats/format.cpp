// Numbers for people: p-values that never read 0, odds ratios with their edges.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "hangbench/stats.hpp"

namespace hangbench::stats {

std::string format_p(const FisherResult& f) { return format_p(f.p_two_sided, f.log10_p_two_sided); }

std::string format_p(double p, double log10_p) {
  if (p >= 1e-3) return fmt::format("{:.2g}", p);
  if (p >= std::numeric_limits<double>::min()) return fmt::format("{:.1e}", p);
  // Below the smallest normal double: rebuild mantissa and exponent from log10.
  double exponent = std::floor(log10_p);
  double mantissa = std::pow(10.0, log10_p - exponent);
  if (std::round(mantissa * 10) >= 100) {  // 9.96 would print as "10.0"
    mantissa /= 10;
    exponent += 1;
  }
  return fmt::format("{:.1f}e{}", mantissa, static_cast<long long>(exponent));
}

std::string format_odds_ratio(double odds_ratio) {
  if (std::isnan(odds_ratio)) return "n/a";
  if (std::isinf(odds_ratio)) return "inf";
  if (odds_ratio == 0) return "0";
  return fmt::format("{:.3g}", odds_ratio);
}

}  // namespace hangbench::stats
