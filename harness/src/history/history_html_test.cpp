// The nightly page read at a glance: the headline first, the cells that need a
// look next, then the heat map (regressions first, every square linking to its
// night's report) with teardown times on their own axis; and its golden file.
#include <gtest/gtest.h>

#include "hangbench/history.hpp"
#include "history/render.hpp"
#include "history_fixture.hpp"
#include "report/report_fixture.hpp"

namespace {

using namespace hangbench;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HistoryGlance, TheLatestNightAgainstTheEarlierOnes) {
  auto table = history_test::make_table(1, 3, 5);
  auto glances = history::glance(table);
  ASSERT_EQ(glances.size(), 3u);
  EXPECT_TRUE(glances[0].regressed);  // 9/20 against 0/80
  EXPECT_EQ(glances[0].baseline_n, 80);
  EXPECT_EQ(glances[0].baseline_nights, 4);
  EXPECT_LT(glances[0].p_worse, 0.01);
  EXPECT_FALSE(glances[0].verdict_changed);
  EXPECT_FALSE(glances[1].regressed);
  EXPECT_TRUE(glances[1].verdict_changed);
  EXPECT_FALSE(glances[2].regressed);  // 20/20 every night: high, but no worse
  table.alpha = 1e-6;                  // p of 9/20 vs 0/80 is about 1e-7
  EXPECT_TRUE(history::glance(table)[0].regressed);
  table.alpha = 1e-9;
  EXPECT_FALSE(history::glance(table)[0].regressed);
}

TEST(HistoryHtml, SaysFirstWhatRegressedAndListsThoseCellsFirst) {
  const std::string html = history::render_history(history_test::make_table(3, 4, 6), "html");
  const size_t headline = html.find("<p id=\"headline\" class=\"bad\">1 cell regressed and 1 verdict changed");
  ASSERT_NE(headline, std::string::npos) << html.substr(0, 2000);
  EXPECT_LT(html.find("<h1>"), headline);
  EXPECT_LT(headline, html.find("id=\"attention\""));
  EXPECT_LT(html.find("id=\"attention\""), html.find("id=\"heatmap\""));
  EXPECT_NE(html.find("regressed: 9/20 against 0/100 over 5 nights"), std::string::npos);
  EXPECT_NE(html.find("verdict CONFIRMED &#8594; INCONCLUSIVE"), std::string::npos);
  // In the heat map the regressed row comes first, the changed one second.
  const size_t map = html.find("id=\"heatmap\"");
  EXPECT_LT(html.find("<tr class=\"regressed\">", map), html.find("<tr class=\"changed\">", map));
  EXPECT_LT(html.find("<tr class=\"changed\">", map), html.find("<tr class=\"steady\">", map));
  // 12 cells x 6 nights, each square a link to its night's report; the attention rows link too.
  EXPECT_EQ(count(html, "<td class=\"night"), 12u * 6);
  EXPECT_EQ(count(html, "<a href=\"reports/2026"), 12u * 6 + 2);
  EXPECT_NE(html.find("<a href=\"reports/20261125-m0.html\">9/20 &#10003;</a>"), std::string::npos);
  EXPECT_EQ(count(html, "td class=\"night stack-changed\""), 4u);  // NCCL changed in matrix 2, night 3
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(HistoryHtml, TeardownTimesHaveTheirOwnAxis) {
  const std::string html = history::render_history(history_test::make_table(1, 3, 3), "html");
  // Two of the three cells pass and have teardown times; the third hangs every trial.
  EXPECT_EQ(count(html, "<svg class=\"teardown\""), 2u);
  EXPECT_NE(html.find("aria-label=\"teardown p50 of nccl=2.17.1+teardown=exit+workers=after+backend=c10d+variant=0, "
                      "0 to 0.52 s\""),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("%</text>"), std::string::npos);  // no percentage axis left for seconds to share
}

TEST(HistoryHtml, AQuietHistorySaysSo) {
  auto table = history_test::make_table(2, 3, 4);
  for (auto& cell : table.cells)
    for (auto& night : cell.nights) {
      night.hangs = 0;
      night.verdict = Verdict::Confirmed;
    }
  table.report_link.clear();
  const std::string html = history::render_history(table, "html");
  EXPECT_NE(html.find("<p id=\"headline\" class=\"good\">Nothing regressed and no verdict changed (6 cells in 2 "
                      "matrices, latest night 2026-11-23).</p>"),
            std::string::npos)
      << html.substr(0, 2000);
  EXPECT_EQ(html.find("id=\"attention\""), std::string::npos);
  EXPECT_EQ(html.find("<a href"), std::string::npos);
}

// Three runs of a matrix on one date: a column each, labelled "#1".."#3" and linked to
// its run's report, not one column showing (and linking) only the last.
TEST(HistoryHtml, ThreeRunsOnOneDateGetAColumnEachLabelledAndLinked) {
  history::HistoryTable table;
  table.report_link = "reports/{matrix}/{run}.html";
  history::CellHistory cell{"socket-teardown", "build=2.17.1", {}};
  for (const auto& [run, started] : std::vector<std::pair<std::string, std::string>>{{"r0", "2026-12-03T02:00:00Z"},
                                                                                     {"r1", "2026-12-04T02:00:00Z"},
                                                                                     {"r2", "2026-12-04T09:30:00Z"},
                                                                                     {"r3", "2026-12-04T15:10:00Z"}}) {
    history::CellNight night;
    night.run_id = run;
    night.started_at = started;
    night.n = 20;
    night.hangs = run == "r3" ? 9 : 0;
    cell.nights.push_back(night);
  }
  table.cells.push_back(cell);
  const std::string html = history::render_history(table, "html");
  const std::string map = html.substr(html.find("id=\"heatmap\""));
  EXPECT_NE(map.find("<th class=\"date\" title=\"2026-12-03 02:00: run r0\"><a "
                     "href=\"reports/socket-teardown/r0.html\">12-03</a></th>"),
            std::string::npos)
      << map;
  for (const auto& [run, label] :
       std::vector<std::pair<std::string, std::string>>{{"r1", "12-04 #1"}, {"r2", "12-04 #2"}, {"r3", "12-04 #3"}}) {
    EXPECT_NE(map.find("\"><a href=\"reports/socket-teardown/" + run + ".html\">" + label + "</a></th>"),
              std::string::npos)
        << label << "\n"
        << map;
    EXPECT_NE(map.find("<a href=\"reports/socket-teardown/" + run + ".html\">"), std::string::npos) << run;
  }
  EXPECT_EQ(count(map, "<th class=\"date\""), 4u);
  EXPECT_EQ(count(map, "<td class=\"night"), 4u);
  // The regression is against three runs, on one night: said so.
  EXPECT_NE(html.find("regressed: 9/20 against 0/60 over 3 runs on 2 nights"), std::string::npos) << html;
  EXPECT_NE(html.find("<td><a href=\"reports/socket-teardown/r3.html\">2026-12-04 #3</a></td>"), std::string::npos)
      << html;
}

TEST(HistoryGolden, Html) {
  hangbench::testing::expect_matches_golden("history.html",
                                            history::render_history(history_test::make_table(2, 3, 4), "html"));
}

}  // namespace
