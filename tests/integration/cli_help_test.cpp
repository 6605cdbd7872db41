// `--help` teaches: every command shows examples, its exit codes and where its
// docs are, and an option whose values are words shows the words.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";

int hangbench(const std::string& args, std::string* text) {
  FILE* pipe = ::popen((kHangbench + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) text->append(chunk, got);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CliHelp, TheTopLevelHelpHasExamplesExitCodesAndDocs) {
  std::string text;
  ASSERT_EQ(hangbench("--help", &text), 0) << text;
  EXPECT_NE(text.find("Examples:\n  hangbench run\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Exit codes:\n  0  every expectation confirmed"), std::string::npos) << text;
  EXPECT_NE(text.find("  3  infrastructure error"), std::string::npos) << text;
  EXPECT_NE(text.find("Docs: README.md"), std::string::npos) << text;
}

class CommandHelp : public testing::TestWithParam<const char*> {};

TEST_P(CommandHelp, HasExamplesExitCodesAndAnExistingDocsFile) {
  std::string text;
  ASSERT_EQ(hangbench(std::string(GetParam()) + " --help", &text), 0) << text;
  EXPECT_NE(text.find("Examples:\n  hangbench "), std::string::npos) << text;
  EXPECT_NE(text.find("Exit codes:\n  0  "), std::string::npos) << text;
  EXPECT_NE(text.find("\n  2  "), std::string::npos) << text;
  auto docs = text.find("Docs: ");
  ASSERT_NE(docs, std::string::npos) << text;
  // The first file named is one a reader can open in the source tree.
  std::string first = text.substr(docs + 6, text.find_first_of(" ,\n", docs + 6) - docs - 6);
  EXPECT_TRUE(fs::exists(fs::path(HB_SOURCE_DIR) / first)) << first;
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, CommandHelp,
                         testing::Values("run", "report", "stats fisher", "diagnose", "nccl", "validate", "history",
                                         "evidence", "merge", "sweep", "catalog", "catalog show", "watch"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == ' ' ? '_' : c;
                           return name;
                         });

TEST(CliHelp, EnumOptionsShowTheirWordsNotAMappingTable) {
  for (const char* command : {"validate", "sweep"}) {
    std::string text;
    ASSERT_EQ(hangbench(std::string(command) + " --help", &text), 0) << text;
    EXPECT_NE(text.find("--check ddp|teardown"), std::string::npos) << command << ":\n" << text;
    EXPECT_EQ(text.find("->"), std::string::npos) << command << ":\n" << text;
    EXPECT_EQ(text.find("ENUM"), std::string::npos) << command << ":\n" << text;
  }
  std::string text;
  EXPECT_EQ(hangbench("validate --nccl x.so --check sometimes", &text), 2) << text;
}

}  // namespace
