// Exact statistics for hang counts: Fisher's exact test on 2x2 tables,
// Clopper-Pearson intervals, Holm's step-down adjustment, type-7 quantiles and
// the per-cell verdict rule. docs/statistics.md states every definition.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench {

// An interval of a proportion, e.g. a hang rate.
struct Interval {
  double lo = 0, hi = 1;
};

// n, min, p50, p90, p99, max of a set of values (wall times, teardown times).
struct Quantiles {
  int n = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

}  // namespace hangbench

namespace hangbench::stats {

// "k of n": k events (hangs) among n counted trials.
struct Tally {
  long long k = 0;
  long long n = 0;
};

// Parses "K/N" (0 <= K <= N, N > 0, decimal digits only). On failure returns
// nullopt and puts a sentence saying what is wrong into *error.
std::optional<Tally> parse_tally(const std::string& text, std::string* error);

// Fisher's exact test on the table
//            event      no event
//   a:       a.k        a.n - a.k
//   b:       b.k        b.n - b.k
// conditioned on both margins (hypergeometric law of the top-left count X).
// Every p is computed in log space; the log10 fields stay exact when the p
// itself underflows a double (then the p field is 0 and must not be shown as 0:
// use format_p).
struct FisherResult {
  double p_two_sided = 1;  // sum of P(table) <= P(observed) * (1 + 1e-7), as R does
  double p_a_greater = 1;  // P(X >= a.k): alternative "a's rate is higher" (OR > 1)
  double p_a_less = 1;     // P(X <= a.k): alternative "a's rate is lower" (OR < 1)
  double log10_p_two_sided = 0;
  double log10_p_a_greater = 0;
  double log10_p_a_less = 0;
  // Sample odds ratio (a.k * (b.n-b.k)) / ((a.n-a.k) * b.k): +inf when only the
  // denominator is 0, 0 when only the numerator is 0, NaN when both are.
  double odds_ratio = 0;
  // Conditional maximum-likelihood estimate (what R's fisher.test prints):
  // +inf / 0 at the edges of the support, NaN when the table is degenerate.
  double conditional_mle_odds_ratio = 0;
};

// Throws std::invalid_argument unless 0 <= k <= n for both sides.
FisherResult fisher_exact(Tally a, Tally b);

// Clopper-Pearson exact two-sided interval at `confidence` (0.95 = 95%).
// k = 0 gives lo = 0, k = n gives hi = 1, n = 0 gives [0, 1].
Interval clopper_pearson(long long k, long long n, double confidence = 0.95);

// Holm's step-down adjustment; same order as the input, each result in [0, 1].
std::vector<double> holm_adjust(const std::vector<double>& p);
// The same on log10 p-values (exact where p underflows); results <= 0.
std::vector<double> holm_adjust_log10(const std::vector<double>& log10_p);

// Quantile of `values` (any order) by Hyndman-Fan type 7, numpy's default:
// h = (n-1)q, linear interpolation between the order statistics around h.
// Throws std::invalid_argument for an empty input or q outside [0, 1].
double quantile_type7(std::vector<double> values, double q);
// n, min, p50, p90, p99, max; all zero for no values.
Quantiles summarize_quantiles(const std::vector<double>& values);

struct VerdictResult {
  Verdict verdict = Verdict::None;
  std::string reason;  // one sentence, shown in reports
};

// The rule of docs/statistics.md: expect "hang" is CONFIRMED when the exact
// one-sided binomial test rejects "hang rate <= 1/2" at alpha, CONTRADICTED when
// it rejects "hang rate >= 1/2"; expect "no-hang" is CONTRADICTED by any hang and
// CONFIRMED by zero hangs in enough trials to reject "hang rate >= 1/2" at alpha.
// Everything else (including n = 0) is INCONCLUSIVE; no expectation gives None.
VerdictResult verdict_for(Expectation expect, long long hangs, long long n, double alpha);
// The fewest trials with which a cell can be CONFIRMED at `alpha` (every one hanging,
// or none): the smallest n with 0.5^n <= alpha (7 at 0.01, 10 at 0.001).
int trials_to_confirm(double alpha);

// A p-value for people: "0.0014", "5.8e-04", and for p below what a double
// holds, the mantissa/exponent from log10 ("3.2e-1543"). Never prints 0.
std::string format_p(double p, double log10_p);
// The same for a test's two-sided p.
std::string format_p(const FisherResult& f);
// An odds ratio for people: "inf", "0", "n/a" (NaN), else 3 significant digits.
std::string format_odds_ratio(double odds_ratio);

}  // namespace hangbench::stats
