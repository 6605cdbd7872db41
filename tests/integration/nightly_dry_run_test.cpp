// The nightly job's dry run on a CPU machine (issue 8, item 4): ci/nightly.sh
// without --gpu, on the socket CI matrix with 2 trials a cell, twice with the
// same history store. Checks the JUnit, Markdown and history outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "hangbench/store.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(HB_SOURCE_DIR) + "/ci/nightly.sh";
const std::string kMatrix = std::string(HB_SOURCE_DIR) + "/workloads/socket_teardown/matrix-ci.toml";
const std::vector<std::string> kCells = {
    "close=close-only,gate=after,topology=thread", "close=close-only,gate=after,topology=process",
    "close=close-only,gate=none,topology=thread",  "close=close-only,gate=none,topology=process",
    "close=shutdown,gate=after,topology=thread",   "close=shutdown,gate=after,topology=process",
    "close=shutdown,gate=none,topology=thread",    "close=shutdown,gate=none,topology=process"};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

// Well-formedness of the XML we write: every element closed in order, attribute
// values quoted. Returns "" or what is wrong.
std::string xml_structure_error(const std::string& xml) {
  static const std::regex tag(R"(<(/?)([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(/?)>|<\?xml[^>]*\?>)");
  std::vector<std::string> open;
  size_t position = 0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), tag); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    std::string between = xml.substr(position, m.position() - position);
    if (between.find('<') != std::string::npos) return "unparsable markup near: " + between.substr(0, 60);
    position = m.position() + m.length();
    if (m[2].length() == 0) continue;  // the XML declaration
    if (m[1] == "/") {
      if (open.empty() || open.back() != m[2]) return "unbalanced </" + m[2].str() + ">";
      open.pop_back();
    } else if (m[4] != "/") {
      open.push_back(m[2]);
    }
  }
  if (xml.substr(position).find('<') != std::string::npos) return "unparsable markup at the end";
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

class NightlyDryRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("nightly_dry_run_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    for (int night = 1; night <= 2; ++night) {
      std::string command = "HANGBENCH='" + std::string(HB_BINARY_DIR) + "/harness/hangbench' " +
                            "HANGBENCH_WORKLOADS_DIR='" + std::string(HB_BINARY_DIR) + "/workloads' " +
                            "NIGHTLY_MATRICES='" + kMatrix + "' NIGHTLY_TRIALS=2 bash '" + kScript + "' --history '" +
                            history().string() + "' --out '" + out(night).string() + "' > '" +
                            (root_ / ("night" + std::to_string(night) + ".log")).string() + "' 2>&1";
      exit_codes_.push_back(exit_status(std::system(command.c_str())));
    }
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static fs::path history() { return root_ / "history.sqlite"; }
  static fs::path out(int night) { return root_ / ("out" + std::to_string(night)); }
  static std::string log(int night) { return read_file(root_ / ("night" + std::to_string(night) + ".log")); }

  static inline fs::path root_;
  static inline std::vector<int> exit_codes_;
};

TEST_F(NightlyDryRun, BothNightsExitZero) {
  ASSERT_EQ(exit_codes_.size(), 2u);
  EXPECT_EQ(exit_codes_[0], 0) << log(1);
  EXPECT_EQ(exit_codes_[1], 0) << log(2);
}

TEST_F(NightlyDryRun, JunitParsesAndNamesEveryCell) {
  for (int night = 1; night <= 2; ++night) {
    fs::path junit = out(night) / "junit" / "socket_teardown-matrix-ci.xml";
    ASSERT_TRUE(fs::exists(junit)) << log(night);
    std::string xml = read_file(junit);
    EXPECT_EQ(xml_structure_error(xml), "");
    for (const auto& cell : kCells) EXPECT_NE(xml.find("<testcase name=\"" + cell + "\""), std::string::npos) << cell;
    EXPECT_NE(xml.find("failures=\"0\""), std::string::npos);
  }
}

TEST_F(NightlyDryRun, HistoryCheckJunitNamesEveryCellAgainstThePreviousNight) {
  std::vector<fs::path> checks;
  for (const auto& entry : fs::directory_iterator(out(2) / "junit")) {
    if (entry.path().filename().string().find("-history-") != std::string::npos) checks.push_back(entry.path());
  }
  ASSERT_EQ(checks.size(), 1u) << log(2);
  std::string xml = read_file(checks[0]);
  EXPECT_EQ(xml_structure_error(xml), "");
  for (const auto& cell : kCells) EXPECT_NE(xml.find("<testcase name=\"" + cell + "\""), std::string::npos) << cell;
  EXPECT_NE(xml.find("over 1 previous night(s)"), std::string::npos);
}

TEST_F(NightlyDryRun, MarkdownAndHtmlReportsExist) {
  for (int night = 1; night <= 2; ++night) {
    std::string markdown = read_file(out(night) / "reports" / "socket_teardown-matrix-ci.md");
    EXPECT_NE(markdown.find("close=close-only"), std::string::npos) << log(night);
    EXPECT_TRUE(fs::exists(out(night) / "reports" / "socket_teardown-matrix-ci.html"));
    EXPECT_NE(read_file(out(night) / "nightly.md").find("socket_teardown-matrix-ci"), std::string::npos);
  }
}

TEST_F(NightlyDryRun, HistoryStoreHoldsTwoNights) {
  ASSERT_TRUE(fs::exists(history()));
  hangbench::Store store = hangbench::Store::open(history().string());
  auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0].id, runs[1].id);
  for (const auto& run : runs) {
    EXPECT_EQ(run.trials, 16) << run.id;  // 8 cells x 2 trials, every trial copied
    EXPECT_EQ(run.status, "complete");
  }
  std::string history_md = read_file(out(2) / "history.md");
  EXPECT_NE(history_md.find(runs[0].id), std::string::npos);
  EXPECT_NE(history_md.find(runs[1].id), std::string::npos);
  std::string history_html = read_file(out(2) / "history.html");
  EXPECT_NE(history_html.find("<p id=\"headline\""), std::string::npos);
  EXPECT_NE(history_html.find("id=\"heatmap\""), std::string::npos);
  // Tonight's squares link to tonight's report, which the job keeps under its run id.
  const std::string tonight = runs.back().id;  // list_runs: oldest first
  EXPECT_NE(history_html.find("<a href=\"reports/" + tonight + ".html\">"), std::string::npos) << history_html;
  EXPECT_TRUE(fs::exists(out(2) / "reports" / (tonight + ".html")));
}

// Writes a matrix "nightly-regression" whose one workload `w.sh` runs `body`.
fs::path write_matrix(const fs::path& folder, const std::string& body) {
  fs::create_directories(folder);
  std::ofstream(folder / "w.sh") << "#!/bin/sh\n" << body << "\n";
  fs::permissions(folder / "w.sh", fs::perms::owner_all, fs::perm_options::add);
  std::ofstream(folder / "m.toml") << "name = \"nightly-regression\"\ncommand = \"{matrix_dir}/w.sh {x}\"\n"
                                      "trials = 8\ntimeout = 0.5\nconcurrency = 8\ngrace = 0.2\nstacks = false\n"
                                      "[axes]\nx = [\"1\"]\n";
  return folder / "m.toml";
}

// Two quiet nights, then the same cell hangs every time: the job exits 1 and
// the history check's JUnit names the cell as a regression.
TEST(NightlyScript, RegressionAgainstThePreviousNightsFailsTheJob) {
  fs::path root = fs::temp_directory_path() / ("nightly_regression_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::path quiet = write_matrix(root / "quiet", "exit 0");
  fs::path hanging = write_matrix(root / "hanging", "sleep 30");
  auto night = [&](const fs::path& matrix, const std::string& out) {
    std::string command = "HANGBENCH='" + std::string(HB_BINARY_DIR) + "/harness/hangbench' NIGHTLY_MATRICES='" +
                          matrix.string() + "' bash '" + kScript + "' --history '" + (root / "h.sqlite").string() +
                          "' --out '" + (root / out).string() + "' > /dev/null 2>&1";
    return exit_status(std::system(command.c_str()));
  };
  EXPECT_EQ(night(quiet, "n1"), 0);
  EXPECT_EQ(night(quiet, "n2"), 0);
  EXPECT_EQ(night(hanging, "n3"), 1);
  std::string junit;
  for (const auto& entry : fs::directory_iterator(root / "n3" / "junit")) {
    if (entry.path().filename().string().find("-history-") != std::string::npos) junit = read_file(entry.path());
  }
  EXPECT_EQ(xml_structure_error(junit), "");
  EXPECT_NE(junit.find("type=\"REGRESSION\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("regression in x=1: 8/8 hung tonight against 0/16"), std::string::npos) << junit;
  fs::remove_all(root);
}

// A night stopped by NIGHTLY_RUN_TIMEOUT exits 3 with its run interrupted;
// `--resume` on the same OUT finishes that run (same id, no trial twice) and
// the history holds it once, complete. A third call only reports it again.
TEST(NightlyScript, ResumeFinishesARunStoppedByItsBound) {
  fs::path root = fs::temp_directory_path() / ("nightly_resume_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::path matrix = root / "m" / "m.toml";
  fs::create_directories(matrix.parent_path());
  std::ofstream(matrix) << "name = \"nightly-resume\"\ncommand = \"sleep 0.4\"\n"
                           "trials = 8\ntimeout = 5\nconcurrency = 1\nstacks = false\n[axes]\nx = [\"1\"]\n";
  // The first night is bounded (8 trials of 0.4 s one at a time, stopped after 1 s); the others are not.
  auto night = [&](const std::string& options, const std::string& log) {
    std::string command = std::string(options.empty() ? "NIGHTLY_RUN_TIMEOUT=1 " : "") + "HANGBENCH='" +
                          std::string(HB_BINARY_DIR) + "/harness/hangbench' NIGHTLY_MATRICES='" + matrix.string() +
                          "' bash '" + kScript + "' " + options + " --history '" + (root / "h.sqlite").string() +
                          "' --out '" + (root / "out").string() + "' > '" + (root / log).string() + "' 2>&1";
    return exit_status(std::system(command.c_str()));
  };
  EXPECT_EQ(night("", "n1.log"), 3) << read_file(root / "n1.log");
  {
    hangbench::Store history = hangbench::Store::open((root / "h.sqlite").string());
    auto runs = history.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_NE(runs[0].status, "complete");
    EXPECT_LT(runs[0].trials, 8);
  }
  EXPECT_EQ(night("--resume", "n2.log"), 0) << read_file(root / "n2.log");
  EXPECT_NE(read_file(root / "n2.log").find("resuming its unfinished run"), std::string::npos);
  EXPECT_EQ(night("--resume", "n3.log"), 0) << read_file(root / "n3.log");
  EXPECT_NE(read_file(root / "n3.log").find("complete already"), std::string::npos);
  hangbench::Store history = hangbench::Store::open((root / "h.sqlite").string());
  auto runs = history.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "complete");
  EXPECT_EQ(runs[0].trials, 8);
  EXPECT_NE(read_file(root / "out" / "junit" / "m-m.xml").find("tests=\"1\""), std::string::npos);
  fs::remove_all(root);
}

TEST(NightlyScript, UnknownArgumentIsAUsageError) {
  int status = std::system(("bash '" + kScript + "' --no-such-option > /dev/null 2>&1").c_str());
  EXPECT_EQ(exit_status(status), 2);
}

}  // namespace

// NIGHTLY_MATRICES entries of the form FILE::axis=value,... run only those cells
// (run --filter; values of one axis are alternatives), as the GPU part does for
// the PP4 pair, under a name of their own beside the whole matrix's.
TEST(NightlyFilteredEntry, RunsOnlyTheNamedCellsUnderItsOwnName) {
  const fs::path root = fs::temp_directory_path() / ("nightly_filtered_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string entry = kMatrix + "::close=close-only,gate=after,topology=thread,topology=process";
  const std::string command = "HANGBENCH='" + std::string(HB_BINARY_DIR) + "/harness/hangbench' " +
                              "HANGBENCH_WORKLOADS_DIR='" + std::string(HB_BINARY_DIR) + "/workloads' " +
                              "NIGHTLY_MATRICES='" + entry + "' NIGHTLY_TRIALS=1 bash '" + kScript + "' --history '" +
                              (root / "history.sqlite").string() + "' --out '" + (root / "out").string() + "' > '" +
                              (root / "log").string() + "' 2>&1";
  EXPECT_EQ(exit_status(std::system(command.c_str())), 0) << read_file(root / "log");
  std::vector<fs::path> reports;
  for (const auto& e : fs::directory_iterator(root / "out" / "reports")) {
    if (e.path().extension() == ".md") reports.push_back(e.path());
  }
  ASSERT_EQ(reports.size(), 1u) << read_file(root / "log");
  EXPECT_NE(reports[0].filename().string().find("socket_teardown-matrix-ci-"), std::string::npos) << reports[0];
  hangbench::Store store = hangbench::Store::open((root / "history.sqlite").string());
  auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trials, 2);  // close-only, gate after, both topologies: 2 cells x 1 trial
  fs::remove_all(root);
}

// NIGHTLY_RUN_SET sets matrix keys on every fresh run (run --set), as the GPU plan
// sets stacks=false instead of editing matrix copies.
TEST(NightlyRunSet, SetsAMatrixKeyOnTheRun) {
  const fs::path root = fs::temp_directory_path() / ("nightly_set_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string entry = kMatrix + "::close=close-only,gate=after,topology=thread";
  const std::string command = "HANGBENCH='" + std::string(HB_BINARY_DIR) + "/harness/hangbench' " +
                              "HANGBENCH_WORKLOADS_DIR='" + std::string(HB_BINARY_DIR) + "/workloads' " +
                              "NIGHTLY_MATRICES='" + entry + "' NIGHTLY_RUN_SET='trials=1 stacks=false' bash '" +
                              kScript + "' --history '" + (root / "history.sqlite").string() + "' --out '" +
                              (root / "out").string() + "' > '" + (root / "log").string() + "' 2>&1";
  EXPECT_EQ(exit_status(std::system(command.c_str())), 0) << read_file(root / "log");
  hangbench::Store store = hangbench::Store::open((root / "history.sqlite").string());
  auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trials, 1);  // one cell, the set's one trial instead of the matrix's own
  fs::remove_all(root);
}
