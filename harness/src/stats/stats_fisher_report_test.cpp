// What `hangbench stats fisher` prints, text and JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "hangbench/fisher_report.hpp"

namespace hangbench::stats {
namespace {

TEST(StatsFisherReport, TextShowsBothProportionsAndAllPValues) {
  std::string text = fisher_report_text({8, 98}, {0, 120}, 0.01);
  for (const char* needed :
       {"a: 8/98 hung (8.2 %)", "b: 0/120 hung (0.0 %)", "p two-sided   0.0014", "p (a > b)     0.0014",
        "p (a < b)     1", "odds ratio    inf (sample), inf (conditional MLE)",
        "two-sided p <= alpha 0.01: the hang rates differ"})
    EXPECT_NE(text.find(needed), std::string::npos) << needed << "\n" << text;
}

TEST(StatsFisherReport, JsonCarriesExactValuesAndTextForms) {
  auto j = fisher_report_json({7, 7}, {0, 7}, 0.001);
  EXPECT_EQ(j["schema"], "hangbench.fisher/1");
  EXPECT_NEAR(j["p_two_sided"].get<double>(), 2.0 / 3432, 1e-15);
  EXPECT_NEAR(j["p_a_greater"].get<double>(), 1.0 / 3432, 1e-15);
  EXPECT_EQ(j["p_two_sided_text"], "5.8e-04");
  EXPECT_TRUE(j["odds_ratio"].is_null());
  EXPECT_EQ(j["odds_ratio_text"], "inf");
  EXPECT_EQ(j["significant_two_sided"], true);
  EXPECT_NEAR(j["a"]["ci95"]["lo"].get<double>(), std::pow(0.025, 1.0 / 7), 1e-12);
  EXPECT_EQ(j["b"]["ci95"]["lo"].get<double>(), 0.0);
}

TEST(StatsFisherReport, UnderflowIsNullNumberWithExactText) {
  auto j = fisher_report_json({3000, 5000}, {10, 5000}, 0.01);
  EXPECT_TRUE(j["p_two_sided"].is_null());
  EXPECT_NEAR(j["log10_p_two_sided"].get<double>(), -1164.3435656360675, 1e-6);
  EXPECT_EQ(j["p_two_sided_text"], "4.5e-1165");
  EXPECT_NE(fisher_report_text({3000, 5000}, {10, 5000}, 0.01).find("4.5e-1165"), std::string::npos);
}

}  // namespace
}  // namespace hangbench::stats
