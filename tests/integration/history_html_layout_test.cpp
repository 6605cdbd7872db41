// The nightly history page as a CI engineer sees it each morning: rendered by
// headless Chromium (headless_chromium.hpp) in a 1400 px window, for a history as
// wide as the one of the issue (102 cells over 14 nights). The headline is the
// first thing on the page, the regressed cell leads the heat map, and the whole
// map with its teardown column fits the window.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hangbench/history.hpp"
#include "headless_chromium.hpp"
#include "history/history_fixture.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

constexpr int kWindowWidth = 1400;

const char* kMeasure = R"(<pre id="measure" hidden></pre><script>
const rect = (e) => e.getBoundingClientRect();
const rows = [...document.querySelectorAll('#heatmap tr')].slice(1);
const squares = [...document.querySelectorAll('#heatmap td.night')];
const teardown = [...document.querySelectorAll('#heatmap svg.teardown')];
const firstBlock = document.body.children[1];
document.getElementById('measure').textContent = JSON.stringify({
  innerWidth: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  firstAfterTitle: firstBlock.id,
  headlineTop: rect(document.getElementById('headline')).top,
  headline: document.getElementById('headline').textContent,
  heatmapTop: rect(document.getElementById('heatmap')).top,
  heatmapRight: rect(document.getElementById('heatmap')).right,
  rows: rows.length,
  firstRow: rows[0].className,
  firstRowCell: rows[0].querySelector('td.cell').textContent,
  squares: squares.length,
  squareMinWidth: Math.min(...squares.map((e) => rect(e).width)),
  squareMaxLines: Math.max(...squares.map((e) => { const r = document.createRange(); r.selectNodeContents(e);
                                                    return new Set([...r.getClientRects()].map((c) => c.top)).size; })),
  teardownPlots: teardown.length,
  teardownRight: Math.max(...teardown.map((e) => rect(e).right)),
});
</script>)";

TEST(HistoryHtmlLayout, TheHeadlineLeadsAndTheWholeMapFitsA1400PixelWindow) {
  const fs::path dir = fs::path(HB_BINARY_DIR) / "history_html_layout_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string html = history::render_history(history_test::make_table(3, 34, 14), "html");
  ASSERT_EQ(html.find("<script"), std::string::npos);  // the page itself stays script-free
  const fs::path page = dir / "history-measured.html";
  std::ofstream(page) << testing::with_measure(html, kMeasure);

  nlohmann::json m = testing::measure_in_chromium(page, dir / "profile", kWindowWidth);
  ASSERT_TRUE(m.is_object());
  SCOPED_TRACE(m.dump());
  EXPECT_EQ(m["innerWidth"], kWindowWidth);
  EXPECT_LE(m["scrollWidth"].get<double>(), kWindowWidth);  // no horizontal scroll
  EXPECT_EQ(m["firstAfterTitle"], "headline");              // the first line under the title says it
  EXPECT_LT(m["headlineTop"].get<double>(), 200);
  EXPECT_NE(m["headline"].get<std::string>().find("1 cell regressed and 1 verdict changed"), std::string::npos);
  EXPECT_LT(m["headlineTop"].get<double>(), m["heatmapTop"].get<double>());
  EXPECT_LE(m["heatmapRight"].get<double>(), kWindowWidth);
  EXPECT_EQ(m["rows"], 102);
  EXPECT_EQ(m["firstRow"], "regressed");
  EXPECT_NE(m["firstRowCell"].get<std::string>().find("variant=0"), std::string::npos);
  EXPECT_EQ(m["squares"], 102 * 14);
  EXPECT_GT(m["squareMinWidth"].get<double>(), 30);  // "20/20 ✓" readable
  EXPECT_EQ(m["squareMaxLines"], 1);
  EXPECT_EQ(m["teardownPlots"], 102 - 3 * 11);  // every third cell hangs in every trial: no teardown
  EXPECT_LE(m["teardownRight"].get<double>(), kWindowWidth);
}

// Three runs of one matrix on the latest date (the nightly job run again by hand):
// a column each, every column labelled differently and linked to its own run's
// report, and the page still fits the window.
const char* kMeasureColumns = R"(<pre id="measure" hidden></pre><script>
const rect = (e) => e.getBoundingClientRect();
const heads = [...document.querySelectorAll('#heatmap th.date')];
const firstRow = [...document.querySelectorAll('#heatmap tr')][1];
document.getElementById('measure').textContent = JSON.stringify({
  scrollWidth: document.documentElement.scrollWidth,
  labels: heads.map((e) => e.textContent),
  links: heads.map((e) => { const a = e.querySelector('a'); return a ? a.getAttribute('href') : ''; }),
  headWidths: heads.map((e) => rect(e).width),
  squaresInFirstRow: firstRow.querySelectorAll('td.night').length,
  squareLinks: [...firstRow.querySelectorAll('td.night a')].map((a) => a.getAttribute('href')),
  headLefts: heads.map((e) => rect(e).left),
  squareLefts: [...firstRow.querySelectorAll('td.night')].map((e) => rect(e).left),
});
</script>)";

TEST(HistoryHtmlLayout, ThreeRunsOnOneDateAreThreeLabelledLinkedColumns) {
  const fs::path dir = fs::path(HB_BINARY_DIR) / "history_html_layout_runs_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  history::HistoryTable table = history_test::make_table(1, 6, 5);
  // The latest night ran twice more, later that day.
  for (auto& cell : table.cells) {
    history::CellNight last = cell.nights.back();
    for (const char* time : {"09:30", "15:10"}) {
      last.run_id = "rerun-" + std::string(time).substr(0, 2);
      last.started_at = last.started_at.substr(0, 11) + time + ":00Z";
      cell.nights.push_back(last);
    }
  }
  const std::string html = history::render_history(table, "html");
  const fs::path page = dir / "history-runs-measured.html";
  std::ofstream(page) << testing::with_measure(html, kMeasureColumns);

  nlohmann::json m = testing::measure_in_chromium(page, dir / "profile", kWindowWidth);
  ASSERT_TRUE(m.is_object());
  SCOPED_TRACE(m.dump());
  EXPECT_LE(m["scrollWidth"].get<double>(), kWindowWidth);
  const std::vector<std::string> labels = m["labels"];
  EXPECT_EQ(labels, (std::vector<std::string>{"11-20", "11-21", "11-22", "11-23", "11-24 #1", "11-24 #2", "11-24 #3"}));
  const std::vector<std::string> links = m["links"];
  EXPECT_EQ(links,
            (std::vector<std::string>{"reports/20261120-m0.html", "reports/20261121-m0.html",
                                      "reports/20261122-m0.html", "reports/20261123-m0.html",
                                      "reports/20261124-m0.html", "reports/rerun-09.html", "reports/rerun-15.html"}));
  EXPECT_EQ(m["squaresInFirstRow"], 7);
  const std::vector<std::string> square_links = m["squareLinks"];
  EXPECT_EQ(square_links, links);  // each square under its column's run
  for (size_t i = 0; i < labels.size(); ++i) {
    EXPECT_GT(m["headWidths"][i].get<double>(), 30) << labels[i];
    EXPECT_NEAR(m["headLefts"][i].get<double>(), m["squareLefts"][i].get<double>(), 1) << labels[i];
  }
}

}  // namespace
}  // namespace hangbench
