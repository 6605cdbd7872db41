// The verdict rule of docs/statistics.md, the K/N parser and number formatting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hangbench/stats.hpp"

namespace hangbench::stats {
namespace {

TEST(StatsVerdict, ExpectHang) {
  // 7 of 7: P(>= 7 | 1/2) = 1/128 = 0.0078 <= 0.01.
  EXPECT_EQ(verdict_for(Expectation::Hang, 7, 7, 0.01).verdict, Verdict::Confirmed);
  // The fewest that can: 7 at 0.01 (above), 10 at 0.001, and 9 cannot.
  EXPECT_EQ(trials_to_confirm(0.01), 7);
  EXPECT_EQ(trials_to_confirm(0.001), 10);
  EXPECT_EQ(verdict_for(Expectation::Hang, 10, 10, 0.001).verdict, Verdict::Confirmed);
  EXPECT_EQ(verdict_for(Expectation::Hang, 9, 9, 0.001).verdict, Verdict::Inconclusive);
  // 6 of 6: 1/64 > 0.01, too few trials for alpha 0.01, enough for 0.05.
  EXPECT_EQ(verdict_for(Expectation::Hang, 6, 6, 0.01).verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_for(Expectation::Hang, 6, 6, 0.05).verdict, Verdict::Confirmed);
  EXPECT_EQ(verdict_for(Expectation::Hang, 1, 1, 0.01).verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_for(Expectation::Hang, 0, 7, 0.01).verdict, Verdict::Contradicted);
  EXPECT_EQ(verdict_for(Expectation::Hang, 10, 20, 0.01).verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_for(Expectation::Hang, 18, 20, 0.01).verdict, Verdict::Confirmed);
  EXPECT_EQ(verdict_for(Expectation::Hang, 2, 20, 0.01).verdict, Verdict::Contradicted);
}

TEST(StatsVerdict, ExpectNoHang) {
  EXPECT_EQ(verdict_for(Expectation::NoHang, 0, 20, 0.01).verdict, Verdict::Confirmed);
  EXPECT_EQ(verdict_for(Expectation::NoHang, 1, 120, 0.01).verdict, Verdict::Contradicted);
  EXPECT_EQ(verdict_for(Expectation::NoHang, 0, 3, 0.01).verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_for(Expectation::NoHang, 0, 7, 0.01).verdict, Verdict::Confirmed);
}

TEST(StatsVerdict, NoTrialsOrNoExpectation) {
  EXPECT_EQ(verdict_for(Expectation::Hang, 0, 0, 0.01).verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_for(Expectation::NoHang, 0, 0, 0.01).verdict, Verdict::Inconclusive);
  EXPECT_EQ(verdict_for(Expectation::None, 3, 5, 0.01).verdict, Verdict::None);
  EXPECT_FALSE(verdict_for(Expectation::Hang, 7, 7, 0.01).reason.empty());
}

TEST(StatsTally, ParsesAndExplainsBadInput) {
  std::string error;
  auto ok = parse_tally("8/98", &error);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->k, 8);
  EXPECT_EQ(ok->n, 98);
  for (const char* bad :
       {"9/8", "-1/3", "abc", "3", "1/0", "1/2/3", "/4", "2/", "1.5/3", "1/99999999999999999999999"}) {
    error.clear();
    EXPECT_FALSE(parse_tally(bad, &error).has_value()) << bad;
    EXPECT_NE(error.find(bad), std::string::npos) << error;
  }
  parse_tally("9/8", &error);
  EXPECT_NE(error.find("more hangs than trials"), std::string::npos);
}

TEST(StatsFormat, PValuesNeverReadZero) {
  EXPECT_EQ(format_p(0.0014164868, std::log10(0.0014164868)), "0.0014");
  EXPECT_EQ(format_p(1.0, 0.0), "1");
  EXPECT_EQ(format_p(5.8275e-4, std::log10(5.8275e-4)), "5.8e-04");
  EXPECT_EQ(format_p(0.0, -1164.3435656), "4.5e-1165");
  EXPECT_EQ(format_p(0.0, -400.0001), "1.0e-400");  // mantissa 9.9977 rounds up to the next decade
  EXPECT_EQ(format_odds_ratio(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_odds_ratio(std::nan("")), "n/a");
  EXPECT_EQ(format_odds_ratio(0.0), "0");
  EXPECT_EQ(format_odds_ratio(6.408309), "6.41");
}

}  // namespace
}  // namespace hangbench::stats
