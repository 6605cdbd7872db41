// Every exporter against its golden file (tests/golden/run.*; regenerate only with
// HB_UPDATE_GOLDEN=1), plus checks of what each format promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/text.hpp"
#include "report_fixture.hpp"

namespace hangbench {
namespace {

std::string render(const std::string& format, const RunSummary& run) {
  auto exporter = make_exporter(format);
  EXPECT_NE(exporter, nullptr) << format;
  return exporter ? exporter->render(run) : "";
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(ReportExporters, EveryFormatMatchesItsGoldenFile) {
  RunSummary run = testing::make_fixed_run();
  for (const std::string& format : exporter_formats()) {
    SCOPED_TRACE(format);
    auto exporter = make_exporter(format);
    ASSERT_NE(exporter, nullptr);
    EXPECT_EQ(exporter->format(), format);
    testing::expect_matches_golden("run." + format + exporter->extension(), exporter->render(run));
  }
}

TEST(ReportExporters, FactoryKnowsTheSixFormats) {
  auto formats = exporter_formats();
  for (const char* f : {"terminal", "markdown", "json", "csv", "junit", "html"})
    EXPECT_NE(std::find(formats.begin(), formats.end(), f), formats.end()) << f;
  EXPECT_EQ(make_exporter("pdf"), nullptr);
}

TEST(ReportExporters, JsonIsSchemaVersionedWithEveryTrial) {
  RunSummary run = testing::make_fixed_run();
  auto doc = nlohmann::json::parse(render("json", run));
  EXPECT_EQ(doc["schema"], "hangbench.run/1");
  ASSERT_EQ(doc["trials"].size(), run.trials.size());
  EXPECT_EQ(doc["trials"][0]["outcome"], "HANG");
  EXPECT_EQ(doc["trials"][0]["evidence_dir"], "evidence/build=2.17.1,fork=after/0");
  EXPECT_EQ(doc["trials"][0]["phases"].size(), 4u);
  EXPECT_TRUE(doc["trials"][0]["teardown_s"].is_null());
  EXPECT_EQ(doc["cells"][2]["verdict"], "CONTRADICTED");
  EXPECT_TRUE(doc["comparisons"][0]["odds_ratio"].is_null());  // +inf has no JSON number
  EXPECT_EQ(doc["comparisons"][0]["odds_ratio_text"], "inf");
  EXPECT_EQ(doc["provenance"]["gpu"], "NVIDIA H200");
}

TEST(ReportExporters, UnderflowedPValuesNeverReadZero) {
  Matrix m;
  m.name = "huge";
  m.cells = {testing::make_cell("old", "x", Expectation::None), testing::make_cell("new", "x", Expectation::None)};
  m.comparisons = {{"old vs new", {{"build", "old"}}, {{"build", "new"}}}};
  std::vector<TrialResult> trials;
  for (int i = 0; i < 3000; ++i)
    trials.push_back(testing::make_trial(m.cells[0], i, i < 2000 ? Outcome::Hang : Outcome::Passed, 1));
  for (int i = 0; i < 3000; ++i)
    trials.push_back(testing::make_trial(m.cells[1], i, i < 10 ? Outcome::Hang : Outcome::Passed, 1));
  RunSummary run = summarize(m, {}, trials);
  ASSERT_EQ(run.comparisons.size(), 1u);
  EXPECT_EQ(run.comparisons[0].p_two_sided, 0.0);
  EXPECT_LT(run.comparisons[0].log10_p_two_sided, -308);
  auto doc = nlohmann::json::parse(render("json", run));
  EXPECT_TRUE(doc["comparisons"][0]["p_two_sided"].is_null());
  std::string text = doc["comparisons"][0]["p_two_sided_text"];
  EXPECT_NE(text.find("e-"), std::string::npos) << text;
  EXPECT_NE(text, "0");
  for (const char* format : {"markdown", "terminal", "html"}) {
    std::string out = render(format, run);
    EXPECT_NE(out.find(text), std::string::npos) << format;
  }
}

TEST(ReportExporters, CsvFollowsRfc4180) {
  RunSummary run = testing::make_fixed_run();
  std::string csv = render("csv", run);
  // Header plus one row per trial; the evidence summary holds one more CRLF-free line break.
  EXPECT_EQ(count(csv, "\r\n"), run.trials.size() + 1);
  EXPECT_EQ(csv.rfind("cell_id,build,fork,trial,outcome", 0), 0u);
  // Quotes are doubled and the field holding commas and a newline is quoted.
  EXPECT_NE(csv.find("\"the ESTABLISHED connection"), std::string::npos);
  EXPECT_NE(csv.find("| \"\"proxy\"\"\nmain thread"), std::string::npos);
  EXPECT_NE(csv.find("\"build=2.17.1,fork=after\""), std::string::npos);
}

TEST(ReportExporters, JunitHasOneTestcasePerCellAndFailsTheContradiction) {
  RunSummary run = testing::make_fixed_run();
  std::string xml = render("junit", run);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>", 0), 0u);
  EXPECT_EQ(count(xml, "<testsuite "), 1u);
  EXPECT_EQ(count(xml, "<testcase "), run.cells.size());
  EXPECT_NE(xml.find("tests=\"4\" failures=\"1\" errors=\"0\""), std::string::npos);
  EXPECT_EQ(count(xml, "<failure "), 1u);
  EXPECT_NE(xml.find("held open by pid 894"), std::string::npos);
  EXPECT_NE(xml.find("&lt;-&gt;"), std::string::npos);
  EXPECT_EQ(xml.find("<->"), std::string::npos);
  EXPECT_NE(xml.find("FLAKY: mixed outcomes"), std::string::npos);
}

TEST(ReportExporters, HtmlIsSelfContained) {
  RunSummary run = testing::make_fixed_run();
  std::string html = render("html", run);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* forbidden : {"<script", "src=", "<link", "@import", "href=\"http", "href=\"/"})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  // Strip plots: every cell twice, but the hung cell reports no teardown; plus the forest plot.
  EXPECT_EQ(count(html, "<svg "), 2 * run.cells.size() - 1 + 1);
  // One dot per counted trial and plot, plus the forest plot's 4 cells and 2 × 2 comparison sides.
  EXPECT_EQ(count(html, "<circle "), 2 * (run.trials.size() - 1) - 8 + 4 + 4);
  EXPECT_NE(html.find("held open by pid 894"), std::string::npos);
}

TEST(ReportExporters, HtmlHasSummaryForestPlotAxesAndEvidenceLinks) {
  RunSummary run = testing::make_fixed_run();
  std::string html = render("html", run);
  EXPECT_NE(html.find("<p class=\"summary\" id=\"summary\">4 cells: 2 confirmed, 1 contradicted, 0 inconclusive, "
                      "1 without expectation; 1 crashed and 1 failed trials in 1 cell; 1 INFRA</p>"),
            std::string::npos)
      << html.substr(0, 3000);
  EXPECT_LT(html.find("id=\"summary\""), html.find("<table"));  // the summary comes first
  EXPECT_NE(html.find("<svg id=\"forest\""), std::string::npos);
  EXPECT_NE(html.find("<title>build=2.17.1,fork=after: 7/7 (59.0–100.0 %)</title>"), std::string::npos);
  EXPECT_NE(html.find("p50 1.75 s · p90 1.87 s"), std::string::npos);  // beside the plot: the backport's wall times
  EXPECT_NE(html.find(">0</text>"), std::string::npos);                // each strip plot's axis starts at 0
  // Each of the 8 hung trials with evidence is linked, folder and files, relative to the run folder.
  EXPECT_EQ(count(html, "<a href=\"evidence/build=2.17.1,fork=after/"), 7u * 3);
  EXPECT_NE(html.find("<a href=\"evidence/build=2.17.1,fork=none/6/evidence.txt\">"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"verdict crashes\""), std::string::npos);
  EXPECT_NE(html.find(">1 crashed, 1 failed</td>"), std::string::npos);
  EXPECT_NE(html.find("<code>hangbench run --matrix workloads/socket_teardown/matrix.toml</code>"), std::string::npos);
}

// The page explains its colours, names the two sides of each comparison, says how
// long the run took, links each cell with hangs to its evidence, and folds the
// near-identical trial folders under one line per cell.
TEST(ReportExporters, HtmlHasALegendSidesDurationCellLinksAndFoldedEvidence) {
  RunSummary run = testing::make_fixed_run();
  std::string html = render("html", run);
  const size_t legend = html.find("<p class=\"legend\" id=\"forest-legend\">");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_LT(legend, html.find("<svg id=\"forest\""));
  for (const char* word : {"CONFIRMED</span>", "CONTRADICTED</span>", "INCONCLUSIVE</span>", "no expectation</span>",
                           "side a</span>", "side b</span>"})
    EXPECT_NE(html.find(word, legend), std::string::npos) << word;
  // Each comparison's rows say which cells each side pools.
  EXPECT_NE(html.find(">fork after: 2.17.1 vs backport: a = build=2.17.1,fork=after</text>"), std::string::npos);
  EXPECT_NE(html.find(">b = build=2.17.1+backport,fork=after</text>"), std::string::npos);
  EXPECT_EQ(html.find(": a</text>"), std::string::npos);
  // The fixture's trials start 10 s apart from 10:00:00; the last one ends 70 s after the first began.
  EXPECT_NE(html.find("<p class=\"duration\" id=\"duration\">Started 2026-12-02T10:00:00Z; took 1m10s"),
            std::string::npos)
      << html.substr(0, 3000);
  EXPECT_LT(html.find("id=\"duration\""), html.find("<table"));
  // The two cells that hung link to their evidence, which carries the anchor; the others do not link.
  EXPECT_NE(html.find("<td class=\"cell\"><a href=\"#evidence-0\">build=2.17.1,<wbr>fork=after</a></td>"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"#evidence-2\" title=\"its evidence\">1/7</a>"), std::string::npos);
  EXPECT_NE(html.find("<h3 id=\"evidence-0\">"), std::string::npos);
  EXPECT_NE(html.find("<h3 id=\"evidence-2\">"), std::string::npos);
  EXPECT_EQ(count(html, "href=\"#evidence-"), 4u);
  // The trial folders are folded: one summary line per cell, the links inside.
  EXPECT_EQ(count(html, "<details><summary>"), 2u);
  EXPECT_NE(html.find("<details><summary>7 evidence folders (one per trial)</summary>"), std::string::npos);
  EXPECT_LT(html.find("<details><summary>7 evidence folders"),
            html.find("<a href=\"evidence/build=2.17.1,fork=after/0/\">"));
}

TEST(ReportExporters, ACellWithCrashesNeverReadsPlainConfirmed) {
  Matrix m;
  m.name = "crashes";
  m.cells = {testing::make_cell("2.17.1", "after", Expectation::Hang)};
  m.cells[0].trials = 20;
  std::vector<TrialResult> trials;
  for (int i = 0; i < 20; ++i)
    trials.push_back(testing::make_trial(m.cells[0], i, i < 18 ? Outcome::Hang : Outcome::Crashed, 5));
  RunSummary run = summarize(m, {}, trials);
  ASSERT_EQ(run.cells[0].verdict, Verdict::Confirmed);
  EXPECT_EQ(report::cell_verdict_label(run.cells[0]), "CONFIRMED, 2 crashed");
  for (const std::string& format : {"terminal", "markdown", "html", "junit"}) {
    std::string out = render(format, run);
    EXPECT_NE(out.find("CONFIRMED, 2 crashed"), std::string::npos) << format << "\n" << out;
  }
  auto doc = nlohmann::json::parse(render("json", run));
  EXPECT_EQ(doc["cells"][0]["crashed"], 2);
  EXPECT_EQ(doc["cells"][0]["verdict_label"], "CONFIRMED, 2 crashed");
  EXPECT_NE(render("terminal", run)
                .find("1 confirmed, 0 contradicted, 0 inconclusive; 2 crashed and 0 failed trials in 1 cell"),
            std::string::npos);
}

TEST(ReportExporters, ComparisonsSayHowCrashedTrialsWereCounted) {
  RunSummary run = testing::make_fixed_run();
  // Comparison 1 pools build=2.17.1 against build=2.17.1+backport: the backport side holds the crash and the failure.
  EXPECT_EQ(run.comparisons[1].b_crashed, 1);
  EXPECT_EQ(run.comparisons[1].b_failed, 1);
  EXPECT_EQ(run.comparisons[1].a_crashed, 0);
  auto doc = nlohmann::json::parse(render("json", run));
  EXPECT_EQ(doc["comparisons"][1]["b_crashed"], 1);
  EXPECT_EQ(doc["comparisons"][1]["counting"], report::counting_note());
  for (const char* format : {"markdown", "terminal", "html"})
    EXPECT_NE(render(format, run).find("Crashed and failed trials count in n as trials that did not hang"),
              std::string::npos)
        << format;
  EXPECT_NE(render("markdown", run).find("| 8/14 | 0 / 0 | 0/10 | 1 / 1 |"), std::string::npos)
      << render("markdown", run);
}

TEST(ReportExporters, JunitTimesAreWallClockSpans) {
  RunSummary run = testing::make_fixed_run();
  std::string xml = render("junit", run);
  // Cell 0: trials start every 10 s from 0; the last (index 6) ends at 60 + 5.06 s.
  EXPECT_NE(xml.find("<testcase name=\"build=2.17.1,fork=after\" classname=\"hangbench.socket-teardown-demo\" "
                     "status=\"run\" time=\"65.060\">"),
            std::string::npos)
      << xml;
  // The suite: from the first start to the last end of any trial (the INFRA trial started at 70 s).
  EXPECT_NE(xml.find("time=\"70.000\""), std::string::npos) << xml;
}

TEST(ReportExporters, JsonCarriesEachCellsCommandAndTheProvenanceArgv) {
  RunSummary run = testing::make_fixed_run();
  auto doc = nlohmann::json::parse(render("json", run));
  EXPECT_EQ(doc["cells"][0]["command"], nlohmann::json({"socket_teardown", "--fork=after"}));
  EXPECT_EQ(doc["cells"][0]["launcher"]["kind"], "process");
  EXPECT_EQ(doc["provenance"]["argv"][0], "hangbench");
  EXPECT_EQ(doc["provenance"]["cuda"], "13.0");
  EXPECT_EQ(doc["summary"], report::run_summary_line(run));
}

TEST(ReportExporters, MarkdownCarriesProvenanceAndEscapesPipes) {
  RunSummary run = testing::make_fixed_run();
  std::string md = render("markdown", run);
  for (const char* needed : {"0123456789ab", "NVIDIA H200", "580.159.04", "2026-12-02T10:00:00Z",
                             "workloads/socket_teardown/matrix.toml", "| build=2.17.1,fork=after | 7 | 7/7 |"})
    EXPECT_NE(md.find(needed), std::string::npos) << needed;
  EXPECT_NE(md.find("> the ESTABLISHED connection"), std::string::npos);
  EXPECT_EQ(report::escape_markdown_cell("a|b\nc"), "a\\|b c");
}

}  // namespace
}  // namespace hangbench
