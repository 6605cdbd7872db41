// `hangbench stats fisher` and `hangbench evidence` as a user runs them: the real
// binary of this build tree, its stdout and its exit code.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
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

namespace {

// A store of one tiny run (2 trials of `true`) to build a table from.
std::filesystem::path tiny_store(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "m.toml") << "name = \"tiny\"\ncommand = \"true\"\ntrials = 2\ntimeout = 5\nstacks = false\n"
                                    "[axes]\nbuild = [\"a\"]\n";
  Result r = run_hangbench("run --matrix " + (root / "m.toml").string() + " --out " + (root / "out").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return root;
}

}  // namespace

// The H200 diagnose JSON of a hung abort (results/), appended under the table:
// the rules run again on it and its native stacks come along.
TEST(StatsCli, EvidenceAppendsOneHangSeenFromOutside) {
  std::filesystem::path root = tiny_store("hb_evidence_hang");
  const std::string diagnose = std::string(HB_SOURCE_DIR) + "/results/h200-2026-12-02-c/diagnose/diagnose.json";
  Result r = run_hangbench("evidence " + (root / "out" / "hangbench.sqlite").string() + " --hang " + diagnose);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(r.output.find("| build |"), r.output.find("## One hang, seen from outside")) << r.output;
  EXPECT_NE(r.output.find("NCCL descriptor-alias teardown hang"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("commFree <- commCleanup <- commReclaim <- ncclCommAbort"), std::string::npos);
  EXPECT_NE(r.output.find("poll <- ncclProxyService"), std::string::npos);
  std::filesystem::remove_all(root);
}

TEST(StatsCli, EvidenceWithAMalformedHangFileNamesItsLine) {
  std::filesystem::path root = tiny_store("hb_evidence_bad_hang");
  std::ofstream(root / "bad.json") << "{\n  \"processes\": [\n    oops\n";
  Result r = run_hangbench("evidence " + (root / "out" / "hangbench.sqlite").string() + " --hang " +
                           (root / "bad.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find((root / "bad.json").string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
  std::filesystem::remove_all(root);
}

// The same failure exits the same way in every command (README: 3 infrastructure):
// a report that cannot be written, whichever command writes it.
TEST(StatsCli, AFileThatCannotBeWrittenIsAnInfrastructureErrorInEveryCommand) {
  std::filesystem::path root = tiny_store("hb_cannot_write");
  const std::string nowhere = (root / "no-such-folder" / "out.md").string();
  const std::string diagnose = std::string(HB_SOURCE_DIR) + "/results/h200-2026-12-02-c/diagnose/diagnose.json";
  for (const std::string& args : {"evidence " + (root / "out" / "hangbench.sqlite").string() + " --out " + nowhere,
                                  "diagnose --from " + diagnose + " --markdown " + nowhere}) {
    Result r = run_hangbench(args);
    EXPECT_EQ(r.exit_code, 3) << args << ": " << r.output;
    EXPECT_NE(r.output.find("infrastructure error: cannot write " + nowhere), std::string::npos) << r.output;
  }
  std::filesystem::remove_all(root);
}
