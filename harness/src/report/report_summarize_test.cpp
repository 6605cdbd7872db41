// summarize() and exit_code_for() on the fixed run and on small edge cases.
#include <gtest/gtest.h>

#include <cmath>

#include "report/trial_metrics.hpp"
#include "report_fixture.hpp"

namespace hangbench {
namespace {

TEST(ReportSummarize, CountsPerCellWithInfraExcluded) {
  RunSummary run = testing::make_fixed_run();
  ASSERT_EQ(run.cells.size(), 4u);
  const CellSummary& hang = run.cells[0];
  EXPECT_EQ(hang.cell, &run.matrix.cells[0]);
  EXPECT_EQ(hang.n, 7);
  EXPECT_EQ(hang.hangs, 7);
  EXPECT_NEAR(hang.hang_ci95.lo, std::pow(0.025, 1.0 / 7), 1e-12);
  EXPECT_EQ(hang.hang_ci95.hi, 1.0);
  EXPECT_EQ(hang.verdict, Verdict::Confirmed);
  const CellSummary& contradicted = run.cells[2];
  EXPECT_EQ(contradicted.n, 7);  // 6 passed + 1 hang; the INFRA trial is not counted
  EXPECT_EQ(contradicted.infra, 1);
  EXPECT_EQ(contradicted.hangs, 1);
  EXPECT_EQ(contradicted.verdict, Verdict::Contradicted);
  EXPECT_EQ(run.cells[1].verdict, Verdict::Confirmed);
  EXPECT_EQ(run.cells[3].verdict, Verdict::None);
  EXPECT_EQ(run.cells[3].crashed, 1);
  EXPECT_EQ(run.cells[3].failed, 1);
}

TEST(ReportSummarize, TeardownIsTheSlowestRank) {
  RunSummary run = testing::make_fixed_run();
  // Rank 1 ends 0.1 s after rank 0: teardown = 0.6 + 0.01 * index.
  const Quantiles& q = run.cells[1].teardown_s;
  EXPECT_EQ(q.n, 7);
  EXPECT_NEAR(q.min, 0.6, 1e-6);
  EXPECT_NEAR(q.max, 0.66, 1e-6);
  EXPECT_NEAR(q.p50, 0.63, 1e-6);
  // Hung trials never reported teardown_end: no teardown time, but a wall time.
  EXPECT_EQ(run.cells[0].teardown_s.n, 0);
  EXPECT_EQ(run.cells[0].wall_s.n, 7);
}

TEST(ReportSummarize, TeardownFallsBackToPidWithoutRanks) {
  TrialResult t;
  t.phases = {{"teardown_begin", 10.0, 7, -1},
              {"teardown_end", 12.5, 7, -1},
              {"teardown_begin", 10.0, 8, -1}};  // pid 8 never finished: ignored
  auto seconds = report::teardown_seconds(t);
  ASSERT_TRUE(seconds.has_value());
  EXPECT_DOUBLE_EQ(*seconds, 2.5);
  EXPECT_FALSE(report::teardown_seconds(TrialResult{}).has_value());
}

TEST(ReportSummarize, EvidenceExampleFromTheFirstHungTrialWithASummary) {
  RunSummary run = testing::make_fixed_run();
  EXPECT_EQ(run.cells[0].evidence_example, testing::kHolderSentence);
  EXPECT_EQ(run.cells[0].evidence_dir, "evidence/build=2.17.1,fork=after/0");
  EXPECT_EQ(run.cells[1].evidence_example, "");
  // A hung trial without a summary (capture failed) gives way to a later one with one.
  Matrix m;
  m.cells = {testing::make_cell("2.17.1", "after", Expectation::Hang)};
  std::vector<TrialResult> trials{testing::make_trial(m.cells[0], 0, Outcome::Hang, 5),
                                  testing::make_trial(m.cells[0], 1, Outcome::Hang, 5)};
  trials[0].evidence_summary.clear();
  trials[1].evidence_summary = "second";
  RunSummary later = summarize(m, {}, trials);
  EXPECT_EQ(later.cells[0].evidence_example, "second");
  EXPECT_EQ(later.cells[0].evidence_dir, trials[1].evidence_dir);
}

TEST(ReportSummarize, ComparisonsPoolCellsAndApplyHolm) {
  RunSummary run = testing::make_fixed_run();
  ASSERT_EQ(run.comparisons.size(), 2u);
  const ComparisonResult& after = run.comparisons[0];
  EXPECT_EQ(after.comparison, &run.matrix.comparisons[0]);
  EXPECT_EQ(after.a_hangs, 7);
  EXPECT_EQ(after.a_n, 7);
  EXPECT_EQ(after.b_hangs, 0);
  EXPECT_EQ(after.b_n, 7);
  EXPECT_NEAR(after.p_two_sided, 2.0 / 3432, 1e-15);
  EXPECT_NEAR(after.p_a_greater, 1.0 / 3432, 1e-15);
  EXPECT_TRUE(std::isinf(after.odds_ratio));
  const ComparisonResult& pooled = run.comparisons[1];  // build=2.17.1: 8 of 14; backport: 0 of 10
  EXPECT_EQ(pooled.a_hangs, 8);
  EXPECT_EQ(pooled.a_n, 14);
  EXPECT_EQ(pooled.b_hangs, 0);
  EXPECT_EQ(pooled.b_n, 10);
  // Holm with two tests: the smaller p doubles, the larger is at least that.
  double smaller = std::min(after.p_two_sided, pooled.p_two_sided);
  double larger = std::max(after.p_two_sided, pooled.p_two_sided);
  const ComparisonResult& first = after.p_two_sided <= pooled.p_two_sided ? after : pooled;
  const ComparisonResult& second = after.p_two_sided <= pooled.p_two_sided ? pooled : after;
  EXPECT_NEAR(first.p_holm, 2 * smaller, 1e-12);
  EXPECT_NEAR(second.p_holm, std::max(2 * smaller, larger), 1e-12);
}

// A comparison with an empty side (its cells filtered out of this run) tests
// nothing: it stays out of Holm's family, so the others keep their adjustment.
TEST(ReportSummarize, AComparisonWithAnEmptySideIsNotRunAndLeftOutOfHolm) {
  RunSummary two = testing::make_fixed_run();
  Matrix m = two.matrix;
  m.comparisons.push_back({"against a build this run did not have", {{"build", "2.17.1"}}, {{"build", "2.99.0"}}});
  RunSummary three = summarize(m, two.provenance, two.trials);
  ASSERT_EQ(three.comparisons.size(), 3u);
  EXPECT_FALSE(three.comparisons[2].tested());
  EXPECT_EQ(three.comparisons[2].b_n, 0);
  EXPECT_EQ(three.comparisons[2].p_holm, 1.0);
  EXPECT_EQ(tested_comparisons(three), 2);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(three.comparisons[i].p_holm, two.comparisons[i].p_holm, 1e-15) << i;
}

TEST(ReportSummarize, TrialsAreOrderedByCellThenIndex) {
  Matrix m;
  m.cells = {testing::make_cell("b", "x", Expectation::None), testing::make_cell("a", "x", Expectation::None)};
  std::vector<TrialResult> trials{
      testing::make_trial(m.cells[1], 1, Outcome::Passed, 1), testing::make_trial(m.cells[0], 1, Outcome::Passed, 1),
      testing::make_trial(m.cells[1], 0, Outcome::Passed, 1), testing::make_trial(m.cells[0], 0, Outcome::Passed, 1)};
  RunSummary run = summarize(m, Provenance{}, trials);
  ASSERT_EQ(run.trials.size(), 4u);
  EXPECT_EQ(run.trials[0].cell_id, m.cells[0].id);
  EXPECT_EQ(run.trials[0].index, 0);
  EXPECT_EQ(run.trials[3].cell_id, m.cells[1].id);
  EXPECT_EQ(run.trials[3].index, 1);
}

TEST(ReportExitCode, ContradictionInfraAndStrict) {
  RunSummary run = testing::make_fixed_run();
  EXPECT_EQ(exit_code_for(run, false), exit_code::kContradicted);

  Matrix m;
  m.cells = {testing::make_cell("2.18.1", "after", Expectation::NoHang)};
  std::vector<TrialResult> ok;
  for (int i = 0; i < 7; ++i) ok.push_back(testing::make_trial(m.cells[0], i, Outcome::Passed, 1));
  EXPECT_EQ(exit_code_for(summarize(m, {}, ok), false), exit_code::kOk);
  EXPECT_EQ(exit_code_for(summarize(m, {}, ok), true), exit_code::kOk);

  std::vector<TrialResult> few(ok.begin(), ok.begin() + 3);  // 0 of 3: inconclusive
  EXPECT_EQ(exit_code_for(summarize(m, {}, few), false), exit_code::kOk);
  EXPECT_EQ(exit_code_for(summarize(m, {}, few), true), exit_code::kContradicted);

  std::vector<TrialResult> broken{testing::make_trial(m.cells[0], 0, Outcome::Infra, 0)};
  RunSummary infra_run = summarize(m, {}, broken);
  EXPECT_EQ(infra_run.cells[0].n, 0);
  EXPECT_EQ(infra_run.cells[0].verdict, Verdict::Inconclusive);
  EXPECT_EQ(exit_code_for(infra_run, false), exit_code::kInfra);
}

}  // namespace
}  // namespace hangbench
