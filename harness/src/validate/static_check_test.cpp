// Each catalog entry's check of a library's bytes, on stand-ins compiled here from
// tests/fixtures/nccl/elf/fake_nccl.c: the string mark of nccl-launch-blocking-proxy,
// the socket check of nccl-socket-close-alias, and an entry whose fix leaves no mark.
#include "hangbench/static_check.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace hangbench::validate {
namespace {

using ::testing::HasSubstr;

class StaticCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "hb-static-check-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A stand-in NCCL: version 2.16.5 or 2.17.1, with or without the string, stripped like a wheel.
  std::string build(const std::string& name, const std::string& flags) {
    const std::string out = dir_ + "/" + name;
    const std::string source = std::string(HB_FIXTURES_DIR) + "/nccl/elf/fake_nccl.c";
    const std::string cc = std::getenv("CC") && *std::getenv("CC") ? std::getenv("CC") : "cc";
    const std::string command = cc + " -shared -fPIC -O2 -o " + out + " " + flags + " -DOTHER_SHUTDOWN_CALLER=0 '" +
                                source + "' && strip " + out;
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return out;
  }
  std::string dir_;
};

const EntryCheck& check_of(const LibraryChecks& c, const std::string& id) {
  for (const auto& k : c.checks)
    if (k.entry == id) return k;
  throw std::runtime_error("no check for " + id);
}

TEST_F(StaticCheckTest, TheLaunchBlockingFixIsTheStringItReads) {
  const std::vector<const catalog::Entry*> entries = {catalog::find("nccl-launch-blocking-proxy"),
                                                      catalog::find("nccl-progress-abort-spin")};
  ASSERT_NE(entries[0], nullptr);
  ASSERT_NE(entries[1], nullptr);
  const auto old_release = build("old.so",
                                 "-DFAKE_VERSION_CODE=21605 '-DFAKE_VERSION_STRING=\"NCCL version 2.16.5+cuda12.0\"' "
                                 "-DSOCKET_CLOSE_SHUTDOWN=0");
  const auto new_release = build("new.so",
                                 "-DFAKE_VERSION_CODE=21701 '-DFAKE_VERSION_STRING=\"NCCL version 2.17.1+cuda12.0\"' "
                                 "-DSOCKET_CLOSE_SHUTDOWN=0 '-DCARRIED_STRING=\"CUDA_LAUNCH_BLOCKING\"'");
  const auto before = check_library(old_release, entries);
  const auto after = check_library(new_release, entries);
  EXPECT_EQ(before.version, "2.16.5");
  EXPECT_EQ(check_of(before, "nccl-launch-blocking-proxy").verdict, StaticVerdict::LacksFix);
  EXPECT_EQ(check_of(after, "nccl-launch-blocking-proxy").verdict, StaticVerdict::HasFix);
  EXPECT_THAT(check_of(after, "nccl-launch-blocking-proxy").reason, HasSubstr("holds the string CUDA_LAUNCH_BLOCKING"));
  // A fix that leaves no mark is said to be so, with why, never guessed.
  EXPECT_EQ(check_of(after, "nccl-progress-abort-spin").verdict, StaticVerdict::NoCheck);
  EXPECT_THAT(check_of(after, "nccl-progress-abort-spin").reason, HasSubstr("static function"));
}

// A change no release undoes: the bytes say whether a library carries it, never "has the fix".
TEST_F(StaticCheckTest, AChangeNoReleaseFixesIsAffectedOrNot) {
  const std::vector<const catalog::Entry*> entries = {catalog::find("nccl-first-collective-connect")};
  ASSERT_NE(entries[0], nullptr);
  const auto at_init = build("init.so",
                             "-DFAKE_VERSION_CODE=22105 '-DFAKE_VERSION_STRING=\"NCCL version 2.21.5+cuda12.4\"' "
                             "-DSOCKET_CLOSE_SHUTDOWN=1 '-DCARRIED_STRING=\"CUDA_LAUNCH_BLOCKING\"'");
  const auto at_first_use = build("runtime.so",
                                  "-DFAKE_VERSION_CODE=22203 '-DFAKE_VERSION_STRING=\"NCCL version 2.22.3+cuda12.5\"' "
                                  "-DSOCKET_CLOSE_SHUTDOWN=1 '-DCARRIED_STRING=\"NCCL_RUNTIME_CONNECT\"'");
  EXPECT_EQ(check_of(check_library(at_init, entries), "nccl-first-collective-connect").verdict,
            StaticVerdict::NotAffected);
  const auto carried = check_of(check_library(at_first_use, entries), "nccl-first-collective-connect");
  EXPECT_EQ(carried.verdict, StaticVerdict::Affected);
  EXPECT_TRUE(has_the_hang(carried.verdict));
  EXPECT_EQ(to_string(carried.verdict), "affected");
}

TEST_F(StaticCheckTest, TheSocketCheckIsInspectsVerdict) {
  const std::vector<const catalog::Entry*> entries = {catalog::find("nccl-socket-close-alias")};
  ASSERT_NE(entries[0], nullptr);
  // Stripped, 2.17.1, no shutdown import: inside the hanging range, so the fix is absent.
  const auto close_only = build("close-only.so",
                                "-DFAKE_VERSION_CODE=21701 '-DFAKE_VERSION_STRING=\"NCCL version 2.17.1+cuda12.0\"' "
                                "-DSOCKET_CLOSE_SHUTDOWN=0");
  const auto c = check_library(close_only, entries);
  EXPECT_EQ(check_of(c, "nccl-socket-close-alias").verdict, StaticVerdict::LacksFix);
  // Stripped with shutdown imported: which function calls it cannot be told.
  const auto shut = build("shutdown.so",
                          "-DFAKE_VERSION_CODE=21801 '-DFAKE_VERSION_STRING=\"NCCL version 2.18.1+cuda12.0\"' "
                          "-DSOCKET_CLOSE_SHUTDOWN=1");
  EXPECT_EQ(check_of(check_library(shut, entries), "nccl-socket-close-alias").verdict, StaticVerdict::CannotTell);
}

TEST_F(StaticCheckTest, AFileThatIsNoNcclLibraryIsAProblemNotAVerdict) {
  const auto c =
      check_library(std::string(HB_FIXTURES_DIR) + "/nccl/elf/fake_nccl.c", {catalog::find("nccl-socket-close-alias")});
  EXPECT_THAT(c.problem, HasSubstr("not an ELF file"));
  EXPECT_TRUE(c.checks.empty());
  EXPECT_TRUE(to_json(c).contains("problem"));
}

}  // namespace
}  // namespace hangbench::validate
