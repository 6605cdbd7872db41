// `--help` teaches: every command shows examples, its exit codes and where its
// docs are, and an option whose values are words shows the words.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// Every command, found from the help itself: the "Commands:" block of each level.
std::vector<std::string> every_command(const std::string& prefix = "") {
  std::string text;
  hangbench(prefix + (prefix.empty() ? "" : " ") + "--help", &text);
  std::vector<std::string> out;
  const auto block = text.find("\nCommands:\n");
  if (block == std::string::npos) return out;
  std::istringstream lines(text.substr(block + 11));
  for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) {
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    const std::string command = prefix.empty() ? name : prefix + " " + name;
    out.push_back(command);
    for (const auto& sub : every_command(command)) out.push_back(sub);
  }
  return out;
}

// The README promises examples, exit codes and the docs in every command's --help,
// each `nccl` subcommand, `stats` and `history append`/`check` included.
TEST(CliHelp, EveryCommandAtEveryLevelHasExamplesExitCodesAndDocs) {
  const auto commands = every_command();
  ASSERT_GE(commands.size(), 20u);
  for (const auto& command : commands) {
    std::string text;
    ASSERT_EQ(hangbench(command + " --help", &text), 0) << command << ":\n" << text;
    EXPECT_NE(text.find("\nUsage: hangbench " + command + " "), std::string::npos) << command << ":\n" << text;
    EXPECT_NE(text.find("Examples:\n  hangbench "), std::string::npos) << command << ":\n" << text;
    EXPECT_NE(text.find("Exit codes:\n  0  "), std::string::npos) << command << ":\n" << text;
    EXPECT_NE(text.find("\nDocs: docs/"), std::string::npos) << command << ":\n" << text;
  }
}

// An option's value reads as words: no CLI11 type text ("INT:INT in [1 - 4096]",
// "FLOAT:POSITIVE", "ddp|teardown=teardown") and no path of the binary.
TEST(CliHelp, NoParserTypeTextAndTheUsageLineNamesTheCommand) {
  for (const auto& command : every_command()) {
    std::string text;
    ASSERT_EQ(hangbench(command + " --help", &text), 0) << text;
    EXPECT_EQ(text.find(HB_BINARY_DIR), std::string::npos) << command << ":\n" << text;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  -", 0) != 0) continue;
      const std::string spec = line.substr(0, line.find("  ", 2));  // the option and its value, before the words
      for (const char* raw : {"INT", "FLOAT", "POSITIVE", "=", ":", "[", "{"})
        EXPECT_EQ(spec.find(raw), std::string::npos) << command << ": '" << raw << "' in " << line;
    }
    for (const char* raw : {"SUBCOMMAND", "INT in [", "NONNEGATIVE"})
      EXPECT_EQ(text.find(raw), std::string::npos) << command << ": " << raw << " in:\n" << text;
  }
}

// Every command's --help, byte for byte (tests/golden/help/; HB_UPDATE_GOLDEN=1
// writes them, then review the diff).
TEST(CliHelp, MatchesTheGoldenFiles) {
  std::vector<std::string> commands{""};  // hangbench --help itself
  for (const auto& command : every_command()) commands.push_back(command);
  for (const std::string& command : commands) {
    std::string text;
    ASSERT_EQ(hangbench(command + " --help", &text), 0) << text;
    std::string file = command.empty() ? "hangbench" : command;
    for (char& c : file) c = c == ' ' ? '-' : c;
    const fs::path golden = fs::path(HB_GOLDEN_DIR) / "help" / (file + ".txt");
    if (const char* update = std::getenv("HB_UPDATE_GOLDEN"); update && std::string(update) == "1") {
      fs::create_directories(golden.parent_path());
      std::ofstream(golden, std::ios::binary) << text;
      continue;
    }
    std::ifstream in(golden, std::ios::binary);
    ASSERT_TRUE(in) << golden << " is missing; create it with HB_UPDATE_GOLDEN=1 and review the diff";
    const std::string want((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, want) << golden << " differs; if the change is intended, rerun with HB_UPDATE_GOLDEN=1";
  }
}

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
