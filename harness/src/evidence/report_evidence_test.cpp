// The release-note table of `hangbench evidence`, from summaries and from real
// SQLite stores written through the Store API.
#include <gtest/gtest.h>

#include <filesystem>

#include "hangbench/evidence_from_stores.hpp"
#include "hangbench/evidence_table.hpp"
#include "hangbench/stats.hpp"
#include "hangbench/store.hpp"
#include "report/report_fixture.hpp"

namespace hangbench {
namespace {

TEST(ReportEvidence, ParsesCellFilters) {
  std::string error;
  auto one = evidence::parse_cell_filter("build=2.18.1", &error);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->at("build"), "2.18.1");
  auto two = evidence::parse_cell_filter("build=2.18.1,fork=after", &error);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->size(), 2u);
  for (const char* bad : {"", "build", "=x", "build=", "build=1,,fork=2"})
    EXPECT_FALSE(evidence::parse_cell_filter(bad, &error).has_value()) << bad;
}

TEST(ReportEvidence, EachRowAgainstTheReferenceOfItsScenario) {
  RunSummary run = testing::make_fixed_run();
  std::string md = evidence::render_evidence_markdown({{"night-1", &run}}, {{"build", "2.17.1+backport"}});
  // fork=after: 7/7 against the backport's 0/7 in the same scenario.
  auto f = stats::fisher_exact({7, 7}, {0, 7});
  EXPECT_NE(md.find("| 2.17.1 | fork=after | 7/7 | 0 | 0 | 59.0–100.0 % | " +
                    stats::format_p(f.p_two_sided, f.log10_p_two_sided) + " |"),
            std::string::npos)
      << md;
  // fork=none: 1/7 against the backport's 0/3.
  auto g = stats::fisher_exact({1, 7}, {0, 3});
  EXPECT_NE(md.find("| 2.17.1 | fork=none | 1/7 | 0 | 0 | 0.4–57.9 % | " +
                    stats::format_p(g.p_two_sided, g.log10_p_two_sided) + " |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2.17.1+backport | fork=after | 0/7 | 0 | 0 | 0.0–41.0 % | reference |"), std::string::npos)
      << md;
  EXPECT_NE(
      md.find(
          "- `night-1`: hangbench 0.1.0 (commit 0123456789ab), NVIDIA H200, driver 580.159.04, gpu-node-7, 2026-12-02"),
      std::string::npos)
      << md;
  EXPECT_EQ(md.find("| run |"), std::string::npos);  // one run: no run column
  // The reference cell with a crashed and a failed trial says so beside its hangs.
  EXPECT_NE(md.find("| 2.17.1+backport | fork=none | 0/3 | 1 | 1 | "), std::string::npos) << md;
  EXPECT_NE(md.find("Crashed and failed trials count in n"), std::string::npos) << md;
}

TEST(ReportEvidence, ReferenceFromAnotherRunIsMarked) {
  RunSummary run = testing::make_fixed_run();
  Matrix m;
  m.cells = {testing::make_cell("2.18.1", "after", Expectation::NoHang)};
  std::vector<TrialResult> trials;
  for (int i = 0; i < 10; ++i) trials.push_back(testing::make_trial(m.cells[0], i, Outcome::Passed, 1));
  RunSummary fixed = summarize(m, testing::make_fixed_run().provenance, trials);
  std::string md = evidence::render_evidence_markdown({{"old", &run}, {"new", &fixed}}, {{"build", "2.18.1"}});
  auto f = stats::fisher_exact({7, 7}, {0, 10});
  EXPECT_NE(md.find("| `old` | 2.17.1 | fork=after | 7/7 | 0 | 0 | 59.0–100.0 % | " +
                    stats::format_p(f.p_two_sided, f.log10_p_two_sided) + " † |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `new` | 2.18.1 | fork=after | 0/10 | 0 | 0 | 0.0–30.8 % | reference |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("† reference pooled from all runs given"), std::string::npos);
  // No reference cell shares the scenario fork=none: no p.
  EXPECT_NE(md.find("| `old` | 2.17.1 | fork=none | 1/7 | 0 | 0 | 0.4–57.9 % | – |"), std::string::npos) << md;
}

class ReportEvidenceStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(HB_BINARY_DIR) / "report_evidence_test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  // Writes the fixed run's matrix and trials into a new store through the Store API.
  std::string write_store(const std::string& name, const std::string& run_id) {
    std::string path = (dir_ / name).string();
    RunSummary run = testing::make_fixed_run();
    Store store = Store::open(path);
    store.begin_run(run_id, run.matrix, run.provenance);
    for (const TrialResult& t : run.trials) store.record_trial(run_id, t);
    store.finish_run(run_id, "complete");
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ReportEvidenceStore, ReadsTheLatestRunOfEachStore) {
  std::string path = write_store("a.sqlite", "run-a");
  std::string md = evidence::evidence_from_stores({path}, {}, {{"build", "2.17.1+backport"}});
  EXPECT_NE(md.find("| 2.17.1 | fork=after | 7/7 | 0 | 0 | 59.0–100.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("`run-a`: hangbench 0.1.0"), std::string::npos) << md;
}

TEST_F(ReportEvidenceStore, SelectsRunsByIdAcrossStores) {
  std::string a = write_store("a.sqlite", "night-1");
  std::string b = write_store("b.sqlite", "night-2");
  std::string md = evidence::evidence_from_stores({a, b}, {"night-2"}, {});
  EXPECT_NE(md.find("- `night-2`: hangbench"), std::string::npos) << md;
  EXPECT_EQ(md.find("night-1"), std::string::npos);
}

TEST_F(ReportEvidenceStore, UsageErrorsForMissingStoresAndRuns) {
  std::string a = write_store("a.sqlite", "night-1");
  EXPECT_THROW(evidence::evidence_from_stores({(dir_ / "absent.sqlite").string()}, {}, {}),
               evidence::EvidenceUsageError);
  EXPECT_THROW(evidence::evidence_from_stores({a}, {"night-9"}, {}), evidence::EvidenceUsageError);
  EXPECT_THROW(evidence::evidence_from_stores({}, {}, {}), evidence::EvidenceUsageError);
}

TEST_F(ReportEvidenceStore, AReferenceThatMatchesNoCellIsAUsageErrorNamingTheAxes) {
  std::string a = write_store("a.sqlite", "night-1");
  try {
    evidence::evidence_from_stores({a}, {}, {{"build", "2.17.2"}});
    FAIL() << "a table of dashes for a reference no cell has";
  } catch (const evidence::EvidenceUsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--reference build=2.17.2 matches no cell"), std::string::npos) << what;
    EXPECT_NE(what.find("build = 2.17.1"), std::string::npos) << what;
    EXPECT_NE(what.find("2.17.1+backport"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hangbench
