// Fisher's exact test against exact rational arithmetic and published values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

using Int = unsigned __int128;

Int choose(int n, int k) {
  if (k < 0 || k > n) return 0;
  Int r = 1;
  for (int i = 1; i <= k; ++i) r = r * static_cast<Int>(n - k + i) / static_cast<Int>(i);  // exact at each step
  return r;
}

// Reference: table probabilities as exact integers over one common denominator,
// ties decided exactly (no tolerance needed), only the final division in double.
struct ExactFisher {
  double two_sided, greater, less;
};

ExactFisher exact_fisher(int ak, int an, int bk, int bn) {
  const int events = ak + bk;
  Int denominator = choose(an + bn, events);
  Int observed = choose(an, ak) * choose(bn, bk);
  Int two = 0, greater = 0, less = 0;
  for (int x = 0; x <= events; ++x) {
    Int weight = choose(an, x) * choose(bn, events - x);
    if (weight == 0) continue;
    if (weight <= observed) two += weight;
    if (x >= ak) greater += weight;
    if (x <= ak) less += weight;
  }
  auto ratio = [&](Int num) {
    return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(denominator));
  };
  return {ratio(two), ratio(greater), ratio(less)};
}

TEST(StatsFisher, SeedTableOneSidedIsAbout0014) {
  // The write-up's tally: 8 of 98 hung with the bug, 0 of 120 with the fix.
  FisherResult r = fisher_exact({8, 98}, {0, 120});
  // P(X = 8) = C(98,8) / C(218,8), as a product of ratios.
  long double expected = 1;
  for (int i = 0; i < 8; ++i) expected *= (98.0L - i) / (218.0L - i);
  EXPECT_NEAR(r.p_a_greater, static_cast<double>(expected), 1e-15);
  EXPECT_NEAR(r.p_a_greater, 0.0014, 0.00005);
  EXPECT_NEAR(r.p_a_less, 1.0, 1e-12);
  EXPECT_NEAR(r.p_two_sided, static_cast<double>(expected), 1e-15);
  EXPECT_TRUE(std::isinf(r.odds_ratio));
  EXPECT_TRUE(std::isinf(r.conditional_mle_odds_ratio));
  // The same table the other way round swaps the one-sided alternatives.
  FisherResult swapped = fisher_exact({0, 120}, {8, 98});
  EXPECT_NEAR(swapped.p_a_less, r.p_a_greater, 1e-15);
  EXPECT_EQ(swapped.odds_ratio, 0.0);
}

TEST(StatsFisher, SevenOfSevenAgainstZeroOfSeven) {
  // Two tables are as extreme as the observed one: two-sided 2/C(14,7) = 1/1716,
  // one-sided 1/3432 (facts.md calls 1/3432 two-sided: that is the one-sided p).
  FisherResult r = fisher_exact({7, 7}, {0, 7});
  EXPECT_NEAR(r.p_two_sided, 2.0 / 3432.0, 1e-16);
  EXPECT_NEAR(r.p_a_greater, 1.0 / 3432.0, 1e-16);
  EXPECT_NEAR(r.log10_p_two_sided, std::log10(2.0 / 3432.0), 1e-12);
}

TEST(StatsFisher, PublishedValuesOfRFisherTest) {
  // R: fisher.test(matrix(c(3,1,1,3),2)): the tea-tasting table.
  FisherResult tea = fisher_exact({3, 4}, {1, 4});
  EXPECT_NEAR(tea.p_two_sided, 0.4857, 5e-5);
  EXPECT_NEAR(tea.p_a_greater, 0.2429, 5e-5);
  // R prints 6.408309 (its uniroot stops at tolerance ~1e-4). Exactly, the MLE
  // solves E[X; psi] = 3 over weights 1,16,36,16,1: psi^4 - 36 psi^2 - 32 psi - 3 = 0.
  const double psi = tea.conditional_mle_odds_ratio;
  EXPECT_NEAR(psi, 6.408309, 1e-4);
  EXPECT_NEAR(std::pow(psi, 4) - 36 * psi * psi - 32 * psi - 3, 0.0, 1e-8);
  EXPECT_NEAR(tea.odds_ratio, 9.0, 1e-12);
  // Wikipedia's Fisher example (1 of 10 vs 11 of 14): two-sided 0.002759.
  FisherResult wiki = fisher_exact({1, 10}, {11, 14});
  EXPECT_NEAR(wiki.p_two_sided, 0.002759, 5e-7);
  EXPECT_NEAR(wiki.p_a_less, 0.001380, 5e-7);
}

TEST(StatsFisher, MatchesExactArithmeticOnEverySmallTable) {
  int tables = 0;
  for (int an = 0; an <= 9; ++an)
    for (int bn = 0; bn <= 9; ++bn)
      for (int ak = 0; ak <= an; ++ak)
        for (int bk = 0; bk <= bn; ++bk) {
          FisherResult got = fisher_exact({ak, an}, {bk, bn});
          ExactFisher want = exact_fisher(ak, an, bk, bn);
          SCOPED_TRACE(::testing::Message() << ak << "/" << an << " vs " << bk << "/" << bn);
          ASSERT_NEAR(got.p_two_sided, want.two_sided, 1e-12);
          ASSERT_NEAR(got.p_a_greater, want.greater, 1e-12);
          ASSERT_NEAR(got.p_a_less, want.less, 1e-12);
          ++tables;
        }
  EXPECT_GT(tables, 2000);
}

TEST(StatsFisher, MatchesExactArithmeticOnMidSizedTables) {
  // C(120, 60) < 2^128: exact integers still hold these.
  const int cases[][4] = {{30, 60, 10, 60}, {0, 60, 5, 60}, {59, 60, 60, 60}, {17, 40, 22, 80}, {1, 60, 0, 60}};
  for (const auto& c : cases) {
    FisherResult got = fisher_exact({c[0], c[1]}, {c[2], c[3]});
    ExactFisher want = exact_fisher(c[0], c[1], c[2], c[3]);
    EXPECT_NEAR(got.p_two_sided / want.two_sided, 1.0, 1e-9);
    EXPECT_NEAR(got.p_a_greater / want.greater, 1.0, 1e-9);
    EXPECT_NEAR(got.p_a_less / want.less, 1.0, 1e-9);
  }
}

TEST(StatsFisher, TablesWithZerosAndSingleTrials) {
  FisherResult nothing = fisher_exact({0, 10}, {0, 10});  // no hangs anywhere: one table
  EXPECT_EQ(nothing.p_two_sided, 1.0);
  EXPECT_TRUE(std::isnan(nothing.odds_ratio));
  EXPECT_TRUE(std::isnan(nothing.conditional_mle_odds_ratio));
  FisherResult all = fisher_exact({10, 10}, {10, 10});  // everything hung
  EXPECT_EQ(all.p_two_sided, 1.0);
  FisherResult one = fisher_exact({1, 1}, {0, 1});  // n = 1 on each side
  EXPECT_NEAR(one.p_two_sided, 1.0, 1e-15);
  EXPECT_NEAR(one.p_a_greater, 0.5, 1e-15);
  FisherResult empty_side = fisher_exact({0, 0}, {3, 5});  // a side without trials
  EXPECT_EQ(empty_side.p_two_sided, 1.0);
  EXPECT_EQ(empty_side.p_a_greater, 1.0);
}

TEST(StatsFisher, CountsInTheThousandsKeepLog10WhenPUnderflows) {
  // Reference from exact rational arithmetic (Python fractions with math.comb).
  FisherResult r = fisher_exact({3000, 5000}, {10, 5000});
  EXPECT_EQ(r.p_two_sided, 0.0);                                // below the smallest double...
  EXPECT_NEAR(r.log10_p_two_sided, -1164.3435656360675, 1e-6);  // ...but known exactly here
  EXPECT_NEAR(r.log10_p_a_greater, -1164.6445956317316, 1e-6);
  EXPECT_NEAR(r.log10_p_a_less, 0.0, 1e-12);
  EXPECT_EQ(format_p(r.p_two_sided, r.log10_p_two_sided), "4.5e-1165");
  EXPECT_NEAR(r.odds_ratio, (3000.0 * 4990.0) / (2000.0 * 10.0), 1e-9);
  EXPECT_GT(r.conditional_mle_odds_ratio, 100.0);
  EXPECT_TRUE(std::isfinite(r.conditional_mle_odds_ratio));
}

TEST(StatsFisher, LargeBalancedTablesStayPrecise) {
  // Same rate on both sides: the observed table is the mode, so two-sided p is 1
  // and the one-sided tails add up to 1 + P(observed).
  FisherResult r = fisher_exact({2500, 5000}, {2500, 5000});
  EXPECT_NEAR(r.p_two_sided, 1.0, 1e-9);
  EXPECT_GT(r.p_a_greater + r.p_a_less, 1.0);
  EXPECT_NEAR(r.odds_ratio, 1.0, 1e-12);
  EXPECT_NEAR(r.conditional_mle_odds_ratio, 1.0, 1e-6);
}

TEST(StatsFisher, RejectsImpossibleCounts) {
  EXPECT_THROW(fisher_exact({9, 8}, {0, 1}), std::invalid_argument);
  EXPECT_THROW(fisher_exact({-1, 3}, {0, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace hangbench::stats
