// The nightly history page as a CI engineer sees it each morning: rendered by
// headless Chromium (headless_chromium.hpp) in a 1400 px window, for a history as
// wide as the one of the issue (102 cells over 14 nights). The headline is the
// first thing on the page, the regressed cell leads the heat map, and the whole
// map with its teardown column fits the window.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace hangbench
