// `hangbench history` through the built CLI: append, the table, check's exit
// codes and JUnit, and the usage errors the README's exit codes promise.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "hangbench/history.hpp"
#include "history/history_fixture.hpp"

namespace {

using history_test::add_night;
using history_test::NightSpec;

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";

class HistoryCli : public ::testing::Test {
 protected:
  history_test::TempDir dir{"nightly_history_cli_test"};
  std::string history = (dir.path / "history.sqlite").string();

  // Exit status of `hangbench ARGS`, stdout into `output`.
  int hangbench(const std::string& args, std::string* output = nullptr) {
    std::string out_file = (dir.path / "stdout.txt").string();
    int status = std::system((kHangbench + " " + args + " > '" + out_file + "' 2>/dev/null").c_str());
    if (output) {
      std::ifstream in(out_file);
      *output = std::string(std::istreambuf_iterator<char>(in), {});
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Three quiet nights appended from their own run stores, as the nightly does.
  void append_quiet_nights() {
    for (int night = 0; night < 3; ++night) {
      std::string run_store = (dir.path / ("run" + std::to_string(night) + ".sqlite")).string();
      hangbench::Store store = hangbench::Store::open(run_store);
      add_night(store, {"night" + std::to_string(night), "2026-11-2" + std::to_string(night), 0, 20});
      std::string printed;
      ASSERT_EQ(hangbench("history append --store '" + history + "' '" + run_store + "'", &printed), 0);
      EXPECT_EQ(printed, "night" + std::to_string(night) + "\n");
    }
  }

  void append_tonight(int hangs) {
    std::string run_store = (dir.path / "tonight.sqlite").string();
    hangbench::Store store = hangbench::Store::open(run_store);
    add_night(store, {"tonight", "2026-11-25", hangs, 20});
    ASSERT_EQ(hangbench("history append --store '" + history + "' '" + run_store + "'"), 0);
  }
};

TEST_F(HistoryCli, RegressionExitsOneWithAJunitFailureNamingTheCell) {
  append_quiet_nights();
  append_tonight(10);
  std::string junit_path = (dir.path / "check.xml").string();
  std::string text;
  EXPECT_EQ(hangbench("history check --store '" + history + "' --run tonight --junit '" + junit_path + "'", &text), 1);
  EXPECT_NE(text.find("REGRESSION"), std::string::npos) << text;
  std::ifstream in(junit_path);
  std::string junit(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(junit.find("<failure message=\"regression in build=2.17.1"), std::string::npos) << junit;
}

TEST_F(HistoryCli, SameRateExitsZeroAndTheLatestRunIsTheDefault) {
  append_quiet_nights();
  append_tonight(0);
  std::string text;
  EXPECT_EQ(hangbench("history check --store '" + history + "'", &text), 0);
  EXPECT_NE(text.find("history check of run tonight"), std::string::npos) << text;
}

TEST_F(HistoryCli, TableAndHtmlShowTheNights) {
  append_quiet_nights();
  std::string table;
  EXPECT_EQ(hangbench("history --store '" + history + "'", &table), 0);
  for (const char* id : {"night0", "night1", "night2"}) EXPECT_NE(table.find(id), std::string::npos) << table;
  std::string html_path = (dir.path / "history.html").string();
  EXPECT_EQ(hangbench("history --store '" + history + "' --nights 2 --format html --out '" + html_path + "'"), 0);
  std::ifstream in(html_path);
  std::string html(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(html.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(html.find("<p id=\"headline\" class=\"good\">Nothing regressed"), std::string::npos) << html;
  EXPECT_EQ(html.find("night0"), std::string::npos);  // --nights 2 keeps the last two
  EXPECT_EQ(hangbench("history --store '" + history + "' --format html --report-link 'r/{run}.html' --out '" +
                      html_path + "'"),
            0);
  std::ifstream again(html_path);
  html.assign(std::istreambuf_iterator<char>(again), {});
  EXPECT_NE(html.find("<a href=\"r/night2.html\">"), std::string::npos) << html;
}

TEST_F(HistoryCli, UsageErrorsExitTwo) {
  append_quiet_nights();
  EXPECT_EQ(hangbench("history --store '" + (dir.path / "missing.sqlite").string() + "'"), 2);
  EXPECT_EQ(hangbench("history --store '" + history + "' --format pdf"), 2);
  EXPECT_EQ(hangbench("history check --store '" + history + "' --run no-such-run"), 2);
  EXPECT_EQ(hangbench("history check --store '" + history + "' --alpha 1.5"), 2);
  EXPECT_EQ(hangbench("history append --store '" + history + "' '" + (dir.path / "none.sqlite").string() + "'"), 2);
  EXPECT_EQ(hangbench("history append --store '" + history + "'"), 2);  // no run store given
}

}  // namespace
