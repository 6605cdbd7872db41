// `hangbench stats fisher` and `hangbench evidence` as a user runs them: the real
// binary of this build tree, its stdout and its exit code.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;   // stdout and stderr together
};

Result run_hangbench(const std::string& args) {
  const std::string binary = std::string(HB_BINARY_DIR) + "/harness/hangbench";
  EXPECT_TRUE(std::filesystem::exists(binary)) << binary << " is not built";
  Result r;
  FILE* pipe = popen((binary + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (size_t got = fread(buffer.data(), 1, buffer.size(), pipe)) r.output.append(buffer.data(), got);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(StatsCli, FisherPrintsTheSeedTable) {
  Result r = run_hangbench("stats fisher 8/98 0/120");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("p (a > b)     0.0014"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("95% CI 3.6–15.5 %"), std::string::npos) << r.output;
}

TEST(StatsCli, FisherJson) {
  Result r = run_hangbench("stats fisher 7/7 0/7 --json --alpha 0.001");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"schema\": \"hangbench.fisher/1\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"p_two_sided_text\": \"5.8e-04\""), std::string::npos) << r.output;
}

TEST(StatsCli, BadTalliesAreUsageErrors) {
  for (const char* bad : {"9/8", "-1/3", "abc", "1/0"}) {
    Result r = run_hangbench(std::string("stats fisher ") + bad + " 0/120");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find(bad), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_hangbench("stats fisher 1/2 1/2 --alpha 2").exit_code, 2);
  EXPECT_EQ(run_hangbench("stats fisher 1/2").exit_code, 2);
}

TEST(StatsCli, EvidenceOfAMissingStoreIsAUsageError) {
  Result r = run_hangbench("evidence /nonexistent/hangbench.sqlite");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no store at"), std::string::npos) << r.output;
}

}  // namespace
