// Fisher's exact test on a 2x2 table, in log space so that counts in the
// thousands neither overflow nor lose the p-values that underflow a double.
#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

constexpr double kLn10 = 2.302585092994045684;
// R's fisher.test counts a table as "as extreme" when its probability is within
// this relative tolerance of the observed one, so ties survive rounding.
constexpr double kRelativeTieTolerance = 1e-7;

double log_choose(long long n, long long k) {
  using boost::math::lgamma;
  return lgamma(static_cast<double>(n) + 1) - lgamma(static_cast<double>(k) + 1) -
         lgamma(static_cast<double>(n - k) + 1);
}

// log(sum(exp(terms))) without overflow or underflow.
double log_sum_exp(const std::vector<double>& terms) {
  if (terms.empty()) return -std::numeric_limits<double>::infinity();
  double top = *std::max_element(terms.begin(), terms.end());
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

// The hypergeometric law of the top-left count X given the margins.
struct Hypergeometric {
  long long row_a, row_b, events;  // a.n, b.n, a.k + b.k
  long long lo, hi;                // support of X
  double log_norm;

  Hypergeometric(long long a_n, long long b_n, long long k)
      : row_a(a_n),
        row_b(b_n),
        events(k),
        lo(std::max(0LL, k - b_n)),
        hi(std::min(k, a_n)),
        log_norm(log_choose(a_n + b_n, k)) {}

  double log_pmf(long long x) const { return log_choose(row_a, x) + log_choose(row_b, events - x) - log_norm; }
};

// The conditional MLE of the odds ratio: the psi whose noncentral
// hypergeometric mean equals the observed count (solved on log psi).
double conditional_mle(const Hypergeometric& h, long long observed) {
  if (h.lo == h.hi) return std::numeric_limits<double>::quiet_NaN();
  if (observed == h.lo) return 0;
  if (observed == h.hi) return std::numeric_limits<double>::infinity();
  std::vector<double> base;
  for (long long x = h.lo; x <= h.hi; ++x) base.push_back(h.log_pmf(x));
  auto mean_at = [&](double log_psi) {
    std::vector<double> weights(base.size());
    for (size_t i = 0; i < base.size(); ++i)
      weights[i] = base[i] + static_cast<double>(h.lo + static_cast<long long>(i)) * log_psi;
    double log_total = log_sum_exp(weights);
    double mean = 0;
    for (size_t i = 0; i < base.size(); ++i)
      mean += static_cast<double>(h.lo + static_cast<long long>(i)) * std::exp(weights[i] - log_total);
    return mean;
  };
  const double target = static_cast<double>(observed);
  double left = -1, right = 1;  // the mean grows with log psi: widen until it brackets
  while (mean_at(left) > target && left > -700) left *= 2;
  while (mean_at(right) < target && right < 700) right *= 2;
  for (int i = 0; i < 200 && right - left > 1e-13; ++i) {
    double mid = 0.5 * (left + right);
    (mean_at(mid) < target ? left : right) = mid;
  }
  return std::exp(0.5 * (left + right));
}

double sample_odds_ratio(Tally a, Tally b) {
  // Products in double: exact enough, and no integer overflow for large counts.
  double numerator = static_cast<double>(a.k) * static_cast<double>(b.n - b.k);
  double denominator = static_cast<double>(a.n - a.k) * static_cast<double>(b.k);
  if (denominator == 0)
    return numerator == 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  return numerator / denominator;
}

}  // namespace

FisherResult fisher_exact(Tally a, Tally b) {
  for (const Tally& t : {a, b}) {
    if (t.k < 0 || t.n < 0 || t.k > t.n)
      throw std::invalid_argument("fisher_exact: need 0 <= k <= n, got " + std::to_string(t.k) + "/" +
                                  std::to_string(t.n));
  }
  FisherResult r;
  r.odds_ratio = sample_odds_ratio(a, b);
  Hypergeometric h(a.n, b.n, a.k + b.k);
  r.conditional_mle_odds_ratio = conditional_mle(h, a.k);
  if (h.lo == h.hi) return r;  // one possible table: every p is 1

  const double log_observed = h.log_pmf(a.k);
  const double log_tie = log_observed + std::log1p(kRelativeTieTolerance);
  std::vector<double> as_extreme, at_least, at_most;
  for (long long x = h.lo; x <= h.hi; ++x) {
    double lp = h.log_pmf(x);
    if (lp <= log_tie) as_extreme.push_back(lp);
    if (x >= a.k) at_least.push_back(lp);
    if (x <= a.k) at_most.push_back(lp);
  }
  // Rounding can push a sum of probabilities a hair above 1.
  auto clamp_log = [](double v) { return std::min(v, 0.0); };
  double ln_two = clamp_log(log_sum_exp(as_extreme));
  double ln_greater = clamp_log(log_sum_exp(at_least));
  double ln_less = clamp_log(log_sum_exp(at_most));
  r.log10_p_two_sided = ln_two / kLn10;
  r.log10_p_a_greater = ln_greater / kLn10;
  r.log10_p_a_less = ln_less / kLn10;
  r.p_two_sided = std::exp(ln_two);
  r.p_a_greater = std::exp(ln_greater);
  r.p_a_less = std::exp(ln_less);
  return r;
}

}  // namespace hangbench::stats
