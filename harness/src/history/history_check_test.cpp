// `history check`: tonight's hang rate against the pooled previous nights.
#include <gtest/gtest.h>

#include "hangbench/history.hpp"
#include "history_fixture.hpp"

namespace {

using namespace hangbench;
using history_test::add_night;
using history_test::NightSpec;

class HistoryCheck : public ::testing::Test {
 protected:
  history_test::TempDir dir{"history_check_test"};
  Store store = Store::open((dir.path / "history.sqlite").string());

  void five_quiet_nights() {
    for (int night = 0; night < 5; ++night) {
      add_night(store, {"night" + std::to_string(night), "2026-11-2" + std::to_string(night), 0, 20});
    }
  }
};

TEST_F(HistoryCheck, TenOfTwentyAfterFiveNightsAtZeroIsARegression) {
  five_quiet_nights();
  add_night(store, {"tonight", "2026-11-25", 10, 20});
  auto result = history::check_run(store, "tonight", 5, 0.01);
  ASSERT_EQ(result.cells.size(), 1u);
  const auto& cell = result.cells[0];
  EXPECT_TRUE(cell.regression);
  EXPECT_EQ(cell.baseline_hangs, 0);
  EXPECT_EQ(cell.baseline_n, 100);
  EXPECT_EQ(cell.baseline_nights, 5);
  EXPECT_LT(cell.p_worse, 1e-6);
  EXPECT_EQ(result.exit_code, exit_code::kContradicted);
  std::string junit = history::render_check_junit(result);
  EXPECT_NE(junit.find("type=\"REGRESSION\""), std::string::npos);
  EXPECT_NE(junit.find("regression in build=2.17.1"), std::string::npos);
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos);
}

TEST_F(HistoryCheck, SameRateIsNoRegression) {
  for (int night = 0; night < 5; ++night) {
    add_night(store, {"night" + std::to_string(night), "2026-11-2" + std::to_string(night), 10, 20});
  }
  add_night(store, {"tonight", "2026-11-25", 10, 20});
  auto result = history::check_run(store, "tonight", 5, 0.01);
  ASSERT_EQ(result.cells.size(), 1u);
  EXPECT_FALSE(result.cells[0].regression);
  EXPECT_GT(result.cells[0].p_worse, 0.4);
  EXPECT_EQ(result.exit_code, exit_code::kOk);
  EXPECT_NE(history::render_check_junit(result).find("failures=\"0\""), std::string::npos);
}

TEST_F(HistoryCheck, OnlyTheLastNNightsArePooled) {
  // Two old nights that hung as often as tonight, then five quiet ones: with
  // --nights 5 only the quiet ones count, so tonight is still a regression.
  add_night(store, {"old0", "2026-11-10", 10, 20});
  add_night(store, {"old1", "2026-11-11", 10, 20});
  five_quiet_nights();
  add_night(store, {"tonight", "2026-11-25", 10, 20});
  EXPECT_TRUE(history::check_run(store, "tonight", 5, 0.01).cells[0].regression);
  auto all = history::check_run(store, "tonight", 0, 0.01);
  EXPECT_EQ(all.cells[0].baseline_nights, 7);
  EXPECT_EQ(all.cells[0].baseline_hangs, 20);
}

TEST_F(HistoryCheck, OtherMatricesWithTheSameCellIdAreNotPooled) {
  five_quiet_nights();
  NightSpec other{"other", "2026-11-24", 20, 20};
  other.matrix = "another-matrix";  // same cell id, different matrix: not a baseline
  add_night(store, other);
  add_night(store, {"tonight", "2026-11-25", 10, 20});
  auto result = history::check_run(store, "tonight", 5, 0.01);
  EXPECT_EQ(result.cells[0].baseline_nights, 5);
  EXPECT_EQ(result.cells[0].baseline_hangs, 0);
  EXPECT_TRUE(result.cells[0].regression);
  EXPECT_EQ(history::load_history(store, 0, {}).cells.size(), 2u);  // shown apart too
}

TEST_F(HistoryCheck, FirstNightHasNoBaselineAndPasses) {
  add_night(store, {"tonight", "2026-11-25", 10, 20});
  auto result = history::check_run(store, "tonight", 5, 0.01);
  EXPECT_FALSE(result.cells[0].regression);
  EXPECT_EQ(result.cells[0].baseline_nights, 0);
  EXPECT_EQ(result.exit_code, exit_code::kOk);
}

TEST_F(HistoryCheck, ContradictedExpectationFailsWithoutRegression) {
  five_quiet_nights();
  NightSpec tonight{"tonight", "2026-11-25", 0, 20};
  tonight.expect = Expectation::Hang;  // expected to hang, hung 0 of 20
  add_night(store, tonight);
  auto result = history::check_run(store, "tonight", 5, 0.01);
  EXPECT_FALSE(result.cells[0].regression);
  EXPECT_EQ(result.cells[0].verdict, Verdict::Contradicted);
  EXPECT_EQ(result.exit_code, exit_code::kContradicted);
  EXPECT_NE(history::render_check_junit(result).find("type=\"CONTRADICTED\""), std::string::npos);
}

TEST_F(HistoryCheck, UnknownRunIsAStoreError) {
  EXPECT_THROW(history::check_run(store, "no-such-run", 5, 0.01), StoreError);
}

// Three runs on one date are one night: the check says so instead of "3 nights".
TEST_F(HistoryCheck, SeveralRunsOnOneDateAreCountedAsRunsOnThatNight) {
  for (const char* run : {"morning", "noon", "evening"}) add_night(store, {run, "2026-11-20", 0, 20});
  add_night(store, {"tonight", "2026-11-21", 10, 20});
  auto result = history::check_run(store, "tonight", 0, 0.01);
  ASSERT_EQ(result.cells.size(), 1u);
  EXPECT_EQ(result.cells[0].baseline_nights, 3);
  EXPECT_EQ(result.cells[0].baseline_dates, 1);
  const std::string text = history::render_check_text(result);
  EXPECT_NE(text.find("0/60 over 3 previous runs on 1 night(s)"), std::string::npos) << text;
  EXPECT_NE(history::render_check_junit(result).find("over the previous 3 runs on 1 night(s)"), std::string::npos);
}

}  // namespace
