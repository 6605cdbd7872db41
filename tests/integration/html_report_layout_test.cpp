// The HTML report as a reader sees it: rendered by headless Chromium in a 1400 px
// window (headless_chromium.hpp). A copy of the report gets a measuring script
// appended (the report itself has none). The run is as wide as the real DDP table:
// 72 cells with 60-70 character ids, crashed trials, eight comparisons.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hangbench/summary.hpp"
#include "headless_chromium.hpp"
#include "report/report_fixture.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

constexpr int kWindowWidth = 1400;

RunSummary make_wide_run() {
  Matrix m;
  m.path = "workloads/ddp_abort/matrix-h200.toml";
  m.sha256 = std::string(64, 'a');
  m.name = "ddp-abort-h200";
  for (const char* backend : {"direct", "c10d"})
    for (const char* nccl : {"2.17.1", "2.17.1+backport", "2.18.1", "2.18.1-noshutdown"})
      for (const char* teardown : {"exit", "watchdog", "destroy"})
        for (const char* workers : {"after", "before", "none"}) {
          Cell c;
          c.params = {{"backend", backend}, {"nccl", nccl}, {"teardown", teardown}, {"workers", workers}};
          c.id = std::string("nccl=") + nccl + "+teardown=" + teardown + "+workers=" + workers + "+backend=" + backend;
          c.argv = {"ddp_abort", std::string("--backend=") + backend};
          c.trials = 20;
          bool hangs = (std::string(nccl) == "2.17.1" || std::string(nccl) == "2.18.1-noshutdown") &&
                       std::string(teardown) != "destroy" && std::string(workers) == "after";
          c.expect = hangs ? Expectation::Hang : Expectation::NoHang;
          m.cells.push_back(c);
        }
  for (const char* teardown : {"exit", "watchdog"})
    for (const auto& [a, b] : {std::pair{"2.17.1", "2.17.1+backport"}, {"2.18.1-noshutdown", "2.18.1"}})
      for (const char* backend : {"direct", "c10d"})
        m.comparisons.push_back({fmt::format("{} vs {}, abort at {}, {}", a, b, teardown, backend),
                                 {{"nccl", a}, {"teardown", teardown}, {"workers", "after"}, {"backend", backend}},
                                 {{"nccl", b}, {"teardown", teardown}, {"workers", "after"}, {"backend", backend}}});
  std::vector<TrialResult> trials;
  for (const Cell& c : m.cells)
    for (int i = 0; i < c.trials; ++i) {
      Outcome o = c.expect == Expectation::Hang ? Outcome::Hang : Outcome::Passed;
      if (c.params.at("teardown") == "watchdog" && c.params.at("backend") == "c10d" && i < 2) o = Outcome::Crashed;
      trials.push_back(testing::make_trial(c, i, o, o == Outcome::Hang ? 6.2 : 2.0 + 0.01 * i));
    }
  Provenance p = testing::make_fixed_run().provenance;
  p.argv = {"hangbench", "run", "--matrix", m.path, "--out", "out"};
  return summarize(std::move(m), std::move(p), std::move(trials));
}

// `hidden`: the measurement itself (one long JSON word) must not widen the page.
const char* kMeasure = R"(<pre id="measure" hidden></pre><script>
const rect = (e) => e.getBoundingClientRect();
const lines = (e) => { const r = document.createRange(); r.selectNodeContents(e); return r.getClientRects().length; };
const verdicts = [...document.querySelectorAll('td.verdict')];
const ci = [...document.querySelectorAll('#cells tr')].slice(1).map((tr) => tr.children[5]);
const forest = document.getElementById('forest');
const strips = [...document.querySelectorAll('svg.strip')];
document.getElementById('measure').textContent = JSON.stringify({
  innerWidth: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  tableRight: rect(document.getElementById('cells')).right,
  verdictCells: verdicts.length,
  verdictRight: Math.max(...verdicts.map((e) => rect(e).right)),
  verdictWidth: Math.min(...verdicts.map((e) => rect(e).width)),
  ciMaxLines: Math.max(...ci.map(lines)),
  forestRight: forest ? rect(forest).right : -1,
  forestHeight: forest ? rect(forest).height : 0,
  stripPlots: strips.length,
  summary: document.getElementById('summary').textContent,
  duration: document.getElementById('duration').textContent,
  legendRight: rect(document.getElementById('forest-legend')).right,
  foldedCells: document.querySelectorAll('details:not([open])').length,  // before the next line opens them
  evidenceLinksShown: [...document.querySelectorAll('details a')].filter((a) => a.checkVisibility()).length,
  evidenceLinksShownOpen: (() => { document.querySelectorAll('details').forEach((d) => { d.open = true; });
                                   return [...document.querySelectorAll('details a')]
                                       .filter((a) => a.checkVisibility()).length; })(),
  evidenceLinks: document.querySelectorAll('details a').length,
  cellLinksResolve: [...document.querySelectorAll('#cells a[href^="#evidence-"]')]
                        .every((a) => document.getElementById(a.getAttribute('href').slice(1)) !== null),
  cellLinks: document.querySelectorAll('#cells a[href^="#evidence-"]').length,
});
</script>)";

TEST(HtmlReportLayout, TheWholeTableAndTheForestPlotFitA1400PixelWindow) {
  const fs::path dir = fs::path(HB_BINARY_DIR) / "html_report_layout_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  RunSummary run = make_wide_run();
  std::string html = make_exporter("html")->render(run);
  ASSERT_EQ(html.find("<script"), std::string::npos);  // the report itself stays script-free
  const fs::path page = dir / "report-measured.html";
  std::ofstream(page) << testing::with_measure(html, kMeasure);

  nlohmann::json m = testing::measure_in_chromium(page, dir / "profile", kWindowWidth);
  ASSERT_TRUE(m.is_object());
  SCOPED_TRACE(m.dump());
  EXPECT_EQ(m["innerWidth"], kWindowWidth);
  EXPECT_LE(m["scrollWidth"].get<double>(), kWindowWidth);  // nothing needs a horizontal scroll
  EXPECT_LE(m["tableRight"].get<double>(), kWindowWidth);
  EXPECT_EQ(m["verdictCells"], 72);
  EXPECT_LE(m["verdictRight"].get<double>(), kWindowWidth);  // the verdict column is on screen
  EXPECT_GT(m["verdictWidth"].get<double>(), 40);
  EXPECT_EQ(m["ciMaxLines"], 1);                            // "59.0–100.0 %" on one line
  EXPECT_LE(m["forestRight"].get<double>(), kWindowWidth);  // the forest plot is on the page, whole
  EXPECT_GT(m["forestHeight"].get<double>(), 72 * 10);
  // Hung trials report no teardown time: the 6 cells where every trial hung have no teardown plot (the 2
  // hang cells with crashed trials have one).
  EXPECT_EQ(m["stripPlots"], 2 * 72 - 6);
  EXPECT_NE(m["summary"].get<std::string>().find("72 cells:"), std::string::npos);
  EXPECT_NE(m["duration"].get<std::string>().find("; took "), std::string::npos);
  EXPECT_LE(m["legendRight"].get<double>(), kWindowWidth);
  // The evidence of the 8 hanging cells: folded, none of their 160 trials' links on screen until opened;
  // each hanging cell's row links (id and hangs) to its evidence, and every link has its target.
  EXPECT_EQ(m["foldedCells"], 8);
  EXPECT_EQ(m["evidenceLinks"], 156 * 3);  // each hung trial's folder, evidence.txt and evidence.json
  EXPECT_EQ(m["evidenceLinksShown"], 0);
  EXPECT_EQ(m["evidenceLinksShownOpen"], 156 * 3);  // opened, every one is there
  EXPECT_EQ(m["cellLinks"], 8 * 2);
  EXPECT_TRUE(m["cellLinksResolve"].get<bool>());
}

}  // namespace
}  // namespace hangbench
