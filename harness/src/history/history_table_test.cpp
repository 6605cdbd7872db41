// The history table: nights per cell, quantiles, change markers, append and
// the rendered forms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hangbench/history.hpp"
#include "history_fixture.hpp"

namespace {

using namespace hangbench;
using history_test::add_night;
using history_test::NightSpec;

class HistoryTable : public ::testing::Test {
 protected:
  history_test::TempDir dir{"history_table_test"};
  Store store = Store::open((dir.path / "history.sqlite").string());
};

TEST_F(HistoryTable, NightsInDateOrderWithRatesAndTeardownQuantiles) {
  add_night(store, {"b", "2026-11-21", 3, 10});
  add_night(store, {"a", "2026-11-20", 0, 10});
  auto table = history::load_history(store, 0, {});
  ASSERT_EQ(table.cells.size(), 1u);
  const auto& nights = table.cells[0].nights;
  ASSERT_EQ(nights.size(), 2u);
  EXPECT_EQ(nights[0].run_id, "a");  // dated by started_at, not by insertion
  EXPECT_EQ(nights[1].hangs, 3);
  EXPECT_EQ(nights[1].n, 10);
  EXPECT_EQ(nights[1].teardown_s.n, 7);
  EXPECT_NEAR(nights[1].teardown_s.p50, 0.5, 1e-9);
}

TEST_F(HistoryTable, MarksNcclDriverAndNoChange) {
  add_night(store, {"n1", "2026-11-20", 0, 4, "aaaa", "580.1"});
  add_night(store, {"n2", "2026-11-21", 0, 4, "aaaa", "580.1"});
  add_night(store, {"n3", "2026-11-22", 0, 4, "bbbb", "580.1"});
  add_night(store, {"n4", "2026-11-23", 0, 4, "bbbb", "590.2"});
  auto nights = history::load_history(store, 0, {}).cells.at(0).nights;
  EXPECT_TRUE(nights[0].changes.empty());
  EXPECT_TRUE(nights[1].changes.empty());
  EXPECT_EQ(nights[2].changes, std::vector<std::string>{"nccl"});
  EXPECT_EQ(nights[3].changes, std::vector<std::string>{"driver"});
}

TEST(HistoryStack, LibtorchFromEnvironmentAndUnknownIsNoChange) {
  Cell cell;
  cell.hash_files = {"/x/libnccl.so.2", "/x/workload"};
  Provenance p;
  p.library_hashes = {{"/x/libnccl.so.2", "n1"}, {"/x/workload", "w1"}};
  p.environment = {{"HANGBENCH_TORCH_VERSION", "2.11.0"}};
  auto before = history::stack_of(cell, p);
  EXPECT_EQ(before.nccl, "n1");  // the workload's hash is not the NCCL's
  p.environment["HANGBENCH_TORCH_VERSION"] = "2.12.0";
  auto after = history::stack_of(cell, p);
  EXPECT_EQ(history::stack_changes(before, after), std::vector<std::string>{"libtorch"});
  history::Stack unknown;  // a night without a GPU knows no driver: no marker
  EXPECT_TRUE(history::stack_changes(unknown, after).empty());
}

// A night that ran another matrix, other options (--trials, --timeout, the command)
// or other phase deadlines is marked, as an NCCL or driver change is.
TEST(HistoryStack, MatrixOptionsAndPhaseTimeoutsChangesAreMarked) {
  Cell cell;
  cell.argv = {"socket_teardown", "--close=only"};
  cell.trials = 20;
  Provenance p;
  p.matrix_sha256 = "m1";
  const auto first = history::stack_of(cell, p);
  EXPECT_TRUE(history::stack_changes(first, history::stack_of(cell, p)).empty());
  p.matrix_sha256 = "m2";
  EXPECT_EQ(history::stack_changes(first, history::stack_of(cell, p)), std::vector<std::string>{"matrix"});
  p.matrix_sha256 = "m1";
  Cell more = cell;
  more.trials = 40;
  EXPECT_EQ(history::stack_changes(first, history::stack_of(more, p)), std::vector<std::string>{"options"});
  Cell deadline = cell;
  deadline.phase_timeouts_s = {{"teardown_begin", 8}};
  EXPECT_EQ(history::stack_changes(first, history::stack_of(deadline, p)), std::vector<std::string>{"phase timeouts"});
  Provenance unknown;  // a store that did not record the matrix's hash: no marker
  EXPECT_TRUE(history::stack_changes(history::stack_of(cell, unknown), history::stack_of(cell, p)).empty());
}

TEST_F(HistoryTable, NightsLimitAndCellFilter) {
  for (int i = 0; i < 4; ++i) add_night(store, {"r" + std::to_string(i), "2026-11-2" + std::to_string(i), 0, 2});
  EXPECT_EQ(history::load_history(store, 2, {}).cells.at(0).nights.size(), 2u);
  EXPECT_EQ(history::load_history(store, 2, {}).cells.at(0).nights.front().run_id, "r2");
  EXPECT_TRUE(history::load_history(store, 0, {"build=2.18"}).cells.empty());
  EXPECT_EQ(history::load_history(store, 0, {"2.17"}).cells.size(), 1u);
}

TEST_F(HistoryTable, AppendCopiesRunsOnceWithTheirDates) {
  Store run_store = Store::open((dir.path / "run.sqlite").string());
  add_night(run_store, {"run1", "2026-11-20", 2, 5});
  auto appended = history::append_runs(store, run_store.path());
  EXPECT_EQ(appended, std::vector<std::string>{"run1"});
  EXPECT_TRUE(history::append_runs(store, run_store.path()).empty());  // idempotent
  auto copy = store.load_run("run1");
  EXPECT_EQ(copy.info.started_at, "2026-11-20T02:00:00Z");
  EXPECT_EQ(copy.info.status, "complete");
  EXPECT_EQ(copy.trials.size(), 5u);
  EXPECT_THROW(history::append_runs(store, (dir.path / "missing.sqlite").string()), StoreError);
}

TEST_F(HistoryTable, AStoppedRunResumedLaterIsBroughtUpToDate) {
  Store run_store = Store::open((dir.path / "run.sqlite").string());
  add_night(run_store, {"run1", "2026-11-20", 2, 5});
  run_store.set_status("run1", "interrupted");
  ASSERT_EQ(history::append_runs(store, run_store.path()), std::vector<std::string>{"run1"});
  EXPECT_EQ(store.load_run("run1").info.status, "interrupted");
  // `run --resume` adds the missing trials under the same id and completes it.
  TrialResult late;
  late.cell_id = "build=2.17.1";
  late.index = 5;
  late.outcome = Outcome::Hang;
  run_store.record_trial("run1", late);
  run_store.finish_run("run1", "complete");
  EXPECT_EQ(history::append_runs(store, run_store.path()), std::vector<std::string>{"run1"});
  auto copy = store.load_run("run1");
  EXPECT_EQ(copy.info.status, "complete");
  EXPECT_EQ(copy.trials.size(), 6u);
  EXPECT_TRUE(history::append_runs(store, run_store.path()).empty());
}

TEST_F(HistoryTable, RenderedForms) {
  add_night(store, {"n1", "2026-11-20", 0, 4, "aaaa"});
  add_night(store, {"n2", "2026-11-21", 2, 4, "bbbb"});
  auto table = history::load_history(store, 0, {});
  std::string html = history::render_history(table, "html");
  // history_html_test.cpp has the page's layout; here: what the store gave it.
  EXPECT_NE(html.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"teardown\""), std::string::npos);
  EXPECT_NE(html.find("class=\"night stack-changed\""), std::string::npos);  // NCCL changed on the 21st
  EXPECT_NE(html.find("title=\"2026-11-21 n2: 2/4 hung, no expectation; nccl changed\">2/4</td>"), std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script"), std::string::npos);                        // self-contained, static
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external resource
  std::string markdown = history::render_history(table, "markdown");
  EXPECT_NE(markdown.find("| 2026-11-21 | n2 | 2/4 |"), std::string::npos);
  EXPECT_NE(markdown.find("**nccl**"), std::string::npos);
  auto json = nlohmann::json::parse(history::render_history(table, "json"));
  EXPECT_EQ(json["schema"], "hangbench.history/1");
  EXPECT_FALSE(json["provenance"]["hangbench_commit"].get<std::string>().empty());
  EXPECT_FALSE(json["provenance"]["argv"].empty());
  EXPECT_EQ(json["cells"][0]["nights"][1]["crashed"], 0);
  EXPECT_EQ(json["cells"][0]["nights"][1]["changes"][0], "nccl");
  EXPECT_THROW(history::render_history(table, "pdf"), std::invalid_argument);
}

}  // namespace
