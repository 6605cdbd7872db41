// Every exporter against its golden file (tests/golden/run.*; regenerate only with
// HB_UPDATE_GOLDEN=1), plus checks of what each format promises.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
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
  EXPECT_TRUE(doc["comparisons"][0]["odds_ratio"].is_null());   // +inf has no JSON number
  EXPECT_EQ(doc["comparisons"][0]["odds_ratio_text"], "inf");
  EXPECT_EQ(doc["provenance"]["gpu"], "NVIDIA H200");
}

TEST(ReportExporters, UnderflowedPValuesNeverReadZero) {
  Matrix m;
  m.name = "huge";
  m.cells = {testing::make_cell("old", "x", Expectation::None), testing::make_cell("new", "x", Expectation::None)};
  m.comparisons = {{"old vs new", {{"build", "old"}}, {{"build", "new"}}}};
  std::vector<TrialResult> trials;
  for (int i = 0; i < 3000; ++i) trials.push_back(testing::make_trial(m.cells[0], i, i < 2000 ? Outcome::Hang : Outcome::Passed, 1));
  for (int i = 0; i < 3000; ++i) trials.push_back(testing::make_trial(m.cells[1], i, i < 10 ? Outcome::Hang : Outcome::Passed, 1));
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
  for (const char* forbidden : {"<script", "src=", "href=", "<link", "@import"})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  EXPECT_EQ(count(html, "<svg "), 2 * run.cells.size() - 1);   // hung cell: no teardown plot
  EXPECT_EQ(count(html, "<circle "), 2 * (run.trials.size() - 1) - 8);   // minus INFRA; hangs lack teardown
  EXPECT_NE(html.find("held open by pid 894"), std::string::npos);
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
