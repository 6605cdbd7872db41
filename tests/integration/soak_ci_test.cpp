// The soak (benchmarks/soak.cpp) at CI size: about 100 pathological trials, the
// harness SIGKILLed 3 times at random moments and resumed after each. Nothing may
// survive a kill, no cgroup may be left, no row lost or duplicated, and every
// trial is classed as its workload dictates. The 1,000-trial soak's figures are
// in results/ (docs/lifecycle.md).
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace {

const std::string kSoak = std::string(HB_BINARY_DIR) + "/benchmarks/hangbench_soak";

// Two kills of the harness alone and two of the harness and its watcher together.
TEST(SoakCi, HundredTrialsFourKillsLeaveNothingBehind) {
  ASSERT_TRUE(std::filesystem::exists(kSoak)) << "build the hangbench_soak target (benchmarks/) first";
  std::string out = (std::filesystem::temp_directory_path() / ("hb_soak_ci_" + std::to_string(::getpid()))).string();
  FILE* pipe = ::popen((kSoak + " --trials 100 --kills 2 --combined-kills 2 --out " + out + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
  int status = ::pclose(pipe);
  auto report = nlohmann::json::parse(text.substr(text.find('{')), nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << text;
  EXPECT_EQ(report["kills"], 4) << text;
  // The kill counts are what the soak did (per_kill), not what it was asked.
  int harness = 0, both = 0;
  for (const auto& k : report["per_kill"]) (k["kind"] == "harness" ? harness : both) += 1;
  EXPECT_EQ(report["kills_of_the_harness"], harness) << text;
  EXPECT_EQ(report["kills_of_harness_and_watcher"], both) << text;
  EXPECT_EQ(report["kills_planned"]["of_the_harness"], 2) << text;
  EXPECT_EQ(report["watchers_not_found"], 0) << text;
  EXPECT_EQ(report["max_survivors_1s_after_kill"], 0) << text;
  EXPECT_EQ(report["max_cgroups_1s_after_kill"], 0) << text;
  EXPECT_EQ(report["rows"], 100) << text;
  EXPECT_EQ(report["distinct_rows"], 100) << text;
  EXPECT_EQ(report["run_status"], "complete") << text;
  EXPECT_EQ(report["integrity"], "ok") << text;
  EXPECT_EQ(report["integrity_failures_after_kills"], 0) << text;
  EXPECT_EQ(report["max_survivors_after_kill"], 0) << text;
  EXPECT_EQ(report["max_cgroups_left_after_kill"], 0) << text;
  EXPECT_EQ(report["misclassified"], 0) << text;
  EXPECT_EQ(report["bad_exit_codes"], 0) << text;
  EXPECT_EQ(report["ok"], true) << text;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
}

}  // namespace
