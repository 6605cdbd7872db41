// Clopper-Pearson intervals, Holm's adjustment and type-7 quantiles.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

// P(X >= k) for X ~ Binomial(n, p) by direct summation (small n only).
double binomial_upper_tail(int k, int n, double p) {
  double total = 0;
  for (int x = k; x <= n; ++x) {
    double log_term = std::lgamma(n + 1.0) - std::lgamma(x + 1.0) - std::lgamma(n - x + 1.0) + x * std::log(p) +
                      (n - x) * std::log1p(-p);
    total += std::exp(log_term);
  }
  return total;
}

TEST(StatsClopperPearson, EdgesHaveClosedForms) {
  Interval none = clopper_pearson(0, 10);
  EXPECT_EQ(none.lo, 0.0);
  EXPECT_NEAR(none.hi, 1 - std::pow(0.025, 1.0 / 10), 1e-12);  // 0.3085
  Interval every = clopper_pearson(10, 10);
  EXPECT_NEAR(every.lo, std::pow(0.025, 1.0 / 10), 1e-12);  // 0.6915
  EXPECT_EQ(every.hi, 1.0);
  Interval single = clopper_pearson(1, 1);  // n = 1
  EXPECT_NEAR(single.lo, 0.025, 1e-12);
  EXPECT_EQ(single.hi, 1.0);
  Interval unknown = clopper_pearson(0, 0);
  EXPECT_EQ(unknown.lo, 0.0);
  EXPECT_EQ(unknown.hi, 1.0);
}

TEST(StatsClopperPearson, BoundsPutHalfOfAlphaInEachTail) {
  for (int n : {5, 20, 98}) {
    for (int k = 1; k < n; k += 3) {
      Interval ci = clopper_pearson(k, n);
      SCOPED_TRACE(::testing::Message() << k << "/" << n);
      EXPECT_NEAR(binomial_upper_tail(k, n, ci.lo), 0.025, 1e-9);
      EXPECT_NEAR(1 - binomial_upper_tail(k + 1, n, ci.hi), 0.025, 1e-9);
      EXPECT_LT(ci.lo, static_cast<double>(k) / n);
      EXPECT_GT(ci.hi, static_cast<double>(k) / n);
    }
  }
}

TEST(StatsClopperPearson, KnownValueOfRBinomTest) {
  // R: binom.test(8, 98)$conf.int = 0.03590 0.15450 (rounded)
  Interval ci = clopper_pearson(8, 98);
  EXPECT_NEAR(ci.lo, 0.0359, 5e-4);
  EXPECT_NEAR(ci.hi, 0.1545, 5e-4);
}

TEST(StatsClopperPearson, RejectsBadInput) {
  EXPECT_THROW(clopper_pearson(3, 2), std::invalid_argument);
  EXPECT_THROW(clopper_pearson(1, 2, 1.5), std::invalid_argument);
}

TEST(StatsHolm, StepDownLikeRPAdjust) {
  // R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm")
  auto adjusted = holm_adjust({0.01, 0.02, 0.03, 0.04, 0.05});
  std::vector<double> want{0.05, 0.08, 0.09, 0.09, 0.09};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(adjusted[i], want[i], 1e-15);
  // Order of the input is kept; results are capped at 1.
  auto shuffled = holm_adjust({0.04, 0.001, 0.5});
  EXPECT_NEAR(shuffled[0], 0.08, 1e-15);
  EXPECT_NEAR(shuffled[1], 0.003, 1e-15);
  EXPECT_NEAR(shuffled[2], 0.5, 1e-15);
  EXPECT_EQ(holm_adjust({0.6, 0.7})[0], 1.0);
  EXPECT_TRUE(holm_adjust({}).empty());
}

TEST(StatsHolm, Log10VersionAgreesAndSurvivesUnderflow) {
  std::vector<double> p{0.04, 0.001, 0.5};
  std::vector<double> logs;
  for (double v : p) logs.push_back(std::log10(v));
  auto linear = holm_adjust(p);
  auto logged = holm_adjust_log10(logs);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(std::pow(10.0, logged[i]), linear[i], 1e-12);
  auto tiny = holm_adjust_log10({-1164.3, -2.0});
  EXPECT_NEAR(tiny[0], -1164.3 + std::log10(2.0), 1e-9);
  EXPECT_NEAR(tiny[1], -2.0, 1e-12);
}

TEST(StatsQuantiles, Type7LikeNumpy) {
  EXPECT_DOUBLE_EQ(quantile_type7({4, 1, 3, 2}, 0.5), 2.5);  // np.percentile(.., 50)
  EXPECT_DOUBLE_EQ(quantile_type7({1, 2, 3, 4}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(quantile_type7({15, 20, 35, 40, 50}, 0.4), 29.0);
  EXPECT_DOUBLE_EQ(quantile_type7({7}, 0.99), 7.0);
  EXPECT_DOUBLE_EQ(quantile_type7({1, 2}, 1.0), 2.0);
  EXPECT_THROW(quantile_type7({}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile_type7({1}, 1.5), std::invalid_argument);
}

TEST(StatsQuantiles, SummaryOfValues) {
  Quantiles q = summarize_quantiles({0.5, 0.1, 0.3, 0.2, 0.4});
  EXPECT_EQ(q.n, 5);
  EXPECT_DOUBLE_EQ(q.min, 0.1);
  EXPECT_DOUBLE_EQ(q.max, 0.5);
  EXPECT_DOUBLE_EQ(q.p50, 0.3);
  EXPECT_NEAR(q.p90, 0.46, 1e-12);
  EXPECT_EQ(summarize_quantiles({}).n, 0);
}

}  // namespace
}  // namespace hangbench::stats
