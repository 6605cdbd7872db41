// The verdict of a cell against its expectation (docs/statistics.md).
#include <fmt/format.h>

#include <boost/math/distributions/binomial.hpp>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

// Exact one-sided binomial tails under "hangs happen half the time".
double p_at_least(long long k, long long n) {
  if (k <= 0) return 1.0;
  boost::math::binomial_distribution<double> half(static_cast<double>(n), 0.5);
  return boost::math::cdf(boost::math::complement(half, static_cast<double>(k - 1)));
}

double p_at_most(long long k, long long n) {
  if (k >= n) return 1.0;
  boost::math::binomial_distribution<double> half(static_cast<double>(n), 0.5);
  return boost::math::cdf(half, static_cast<double>(k));
}

}  // namespace

int trials_to_confirm(double alpha) {
  int n = 1;
  for (double p = 0.5; p > alpha && n < 1000; p /= 2) ++n;
  return n;
}

VerdictResult verdict_for(Expectation expect, long long hangs, long long n, double alpha) {
  if (expect == Expectation::None) return {Verdict::None, ""};
  if (n <= 0) return {Verdict::Inconclusive, "no counted trials (all INFRA or none run)"};
  const double upper_tail = p_at_least(hangs, n);  // small: hangs are the rule
  const double lower_tail = p_at_most(hangs, n);   // small: hangs are the exception

  if (expect == Expectation::Hang) {
    if (upper_tail <= alpha)
      return {Verdict::Confirmed, fmt::format("{} of {} hung; P(>= {} | rate 1/2) = {:.2g} <= alpha {}", hangs, n,
                                              hangs, upper_tail, alpha)};
    if (lower_tail <= alpha)
      return {Verdict::Contradicted, fmt::format("only {} of {} hung; P(<= {} | rate 1/2) = {:.2g} <= alpha {}", hangs,
                                                 n, hangs, lower_tail, alpha)};
    return {Verdict::Inconclusive,
            fmt::format("{} of {} hung: hang rate not significantly above or below 1/2 at alpha {}", hangs, n, alpha)};
  }
  // Expect no hang: one hang of a build that should not hang is a real finding.
  if (hangs > 0) return {Verdict::Contradicted, fmt::format("{} of {} hung; expected none", hangs, n)};
  if (lower_tail <= alpha)
    return {Verdict::Confirmed,
            fmt::format("0 of {} hung; P(0 | rate 1/2) = {:.2g} <= alpha {}", n, lower_tail, alpha)};
  return {Verdict::Inconclusive,
          fmt::format("0 of {} hung, too few trials to reject a hang rate of 1/2 at alpha {}", n, alpha)};
}

}  // namespace hangbench::stats
