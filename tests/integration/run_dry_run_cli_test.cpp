// `hangbench run --dry-run` and `--progress` through the real binary: a dry run
// prints the plan, runs nothing and writes nothing; bad combinations exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kSmall = std::string(HB_FIXTURES_DIR) + "/matrix/small.toml";

// Runs hangbench with `args` (shell words), returns the exit code; output in *text.
int hangbench(const std::string& args, std::string* text) {
  FILE* pipe = ::popen((kHangbench + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) text->append(chunk, got);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RunDryRunCli, PrintsThePlanAndWritesNothing) {
  const fs::path out = fs::path(HB_BINARY_DIR) / "run_dry_run_cli_test" / "out";
  fs::remove_all(out.parent_path());
  std::string text;
  ASSERT_EQ(hangbench("run --dry-run --matrix " + kSmall + " --trials 5 --out " + out.string(), &text), 0) << text;
  EXPECT_NE(text.find("3 cells, 15 trials, 2 at once; nothing was run or written"), std::string::npos) << text;
  EXPECT_NE(text.find("behaviour=hang\n  trials 5, timeout 1 s, expect hang\n  command: "), std::string::npos) << text;
  EXPECT_NE(text.find("/test_workloads/hb_test_hang"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out)) << "a dry run created " << out;
}

TEST(RunDryRunCli, BadCombinationsAreUsageErrors) {
  std::string text;
  EXPECT_EQ(hangbench("run --dry-run --resume --out /nonexistent", &text), 2) << text;
  EXPECT_NE(text.find("--dry-run"), std::string::npos) << text;
  text.clear();
  EXPECT_EQ(hangbench("run --dry-run --matrix " + kSmall + " --progress sometimes", &text), 2) << text;
  text.clear();
  EXPECT_EQ(hangbench("run --dry-run --matrix " + kSmall + " --trials -1", &text), 2) << text;
  text.clear();
  // What the run refuses, the dry run refuses: a shard past the last, --out naming a file.
  EXPECT_EQ(hangbench("run --dry-run --matrix " + kSmall + " --shard 4/4", &text), 2) << text;
  EXPECT_NE(text.find("--shard wants K/N"), std::string::npos) << text;
  text.clear();
  EXPECT_EQ(hangbench("run --dry-run --matrix " + kSmall + " --out " + kSmall, &text), 2) << text;
  EXPECT_NE(text.find("is a file, not a folder"), std::string::npos) << text;
}

TEST(RunDryRunCli, AShardShowsOnlyItsShare) {
  std::string text;
  ASSERT_EQ(hangbench("run --dry-run --matrix " + kSmall + " --trials 4 --shard 1/4", &text), 0) << text;
  EXPECT_NE(text.find("shard 1/4 of 12 trials: 3 cells, 3 trials"), std::string::npos) << text;
  EXPECT_NE(text.find("trials 1 of 4 (indices 1)"), std::string::npos) << text;
}

// Every matrix shipped beside a workload plans (one that does not parse is a broken promise
// to whoever runs it on a GPU machine, where nothing here is tried).
TEST(RunDryRunCli, EveryWorkloadsMatrixPlans) {
  int matrices = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(HB_SOURCE_DIR) / "workloads")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".toml" || name.rfind("matrix", 0) != 0) continue;
    ++matrices;
    std::string text;
    EXPECT_EQ(hangbench("run --dry-run --matrix " + entry.path().string(), &text), 0) << entry.path() << "\n" << text;
    EXPECT_NE(text.find("nothing was run or written"), std::string::npos) << entry.path() << "\n" << text;
  }
  EXPECT_GE(matrices, 10);
}

}  // namespace
