// JUnit XML shaped as Bazel's generate-xml.sh writes it: <testsuites> holding one
// <testsuite> per run, one <testcase> per cell. A CONTRADICTED expectation is a
// <failure> carrying the evidence summary; a cell whose trials were all INFRA is
// an <error>; mixed outcomes (flaky-like cells) are told in <system-out>. Times are
// wall-clock spans: a testcase's from its cell's first trial start to its last end,
// the suite's the run's.
#include <fmt/format.h>

#include <algorithm>

#include "report/exporters.hpp"
#include "report/text.hpp"

namespace hangbench::report {
namespace {

// Wall-clock span from the first trial's start to the last trial's end: trials run
// side by side, so the sum of their times would overstate what a CI timeline shows.
double span_seconds(const RunSummary& run, const Cell* only) {
  double first = 0, last = 0;
  bool any = false;
  for (const TrialResult& t : run.trials) {
    if (only != nullptr && t.cell_id != only->id) continue;
    if (t.started_at <= 0) continue;  // a trial that never started has no place on the clock
    first = any ? std::min(first, t.started_at) : t.started_at;
    last = any ? std::max(last, t.started_at + t.wall_s) : t.started_at + t.wall_s;
    any = true;
  }
  return any ? last - first : 0;
}

bool mixed_outcomes(const CellSummary& c) {
  int kinds = (c.hangs > 0) + (c.passed > 0) + (c.crashed > 0) + (c.failed > 0);
  return kinds > 1;
}

std::string testcase(const RunSummary& run, const CellSummary& c, const std::string& suite) {
  double seconds = span_seconds(run, c.cell);
  std::string out = fmt::format("    <testcase name=\"{}\" classname=\"{}\" status=\"run\" time=\"{:.3f}\">\n",
                                escape_xml(c.cell->id), escape_xml(suite), seconds);
  if (c.verdict == Verdict::Contradicted) {
    std::string message = fmt::format("expected {}: {}", to_string(c.cell->expect), c.verdict_reason);
    if (!c.evidence_example.empty()) message += ". Evidence: " + one_line(c.evidence_example);
    out += fmt::format("      <failure message=\"{}\" type=\"CONTRADICTED\">{}{}</failure>\n", escape_xml(message),
                       escape_xml(c.evidence_example),
                       c.evidence_dir.empty() ? "" : escape_xml("\nevidence: " + c.evidence_dir));
  } else if (c.n == 0 && c.infra > 0) {
    out += fmt::format("      <error message=\"{}\" type=\"INFRA\"/>\n",
                       escape_xml(fmt::format("all {} trials were INFRA: the harness could not run them: {}", c.infra,
                                              c.infra_reason)));
  }
  std::string system_out =
      fmt::format("{} hung of {} counted ({}); verdict {}{}", format_rate(c.hangs, c.n), c.n, outcome_mix(c),
                  cell_verdict_label(c), c.verdict_reason.empty() ? "" : ": " + c.verdict_reason);
  if (mixed_outcomes(c)) system_out = "FLAKY: mixed outcomes, " + system_out;
  out += fmt::format("      <system-out>{}</system-out>\n", escape_xml(system_out));
  return out + "    </testcase>\n";
}

class JunitExporter : public Exporter {
 public:
  std::string format() const override { return "junit"; }
  std::string extension() const override { return ".xml"; }

  std::string render(const RunSummary& run) const override {
    const std::string suite = "hangbench." + run.matrix.name;
    int failures = 0, errors = 0;
    const double seconds = span_seconds(run, nullptr);
    std::string cases;
    for (const CellSummary& c : run.cells) {
      failures += c.verdict == Verdict::Contradicted;
      errors += c.verdict != Verdict::Contradicted && c.n == 0 && c.infra > 0;
      cases += testcase(run, c, suite);
    }
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\" "
        "timestamp=\"{}\" hostname=\"{}\">\n",
        escape_xml(suite), run.cells.size(), failures, errors, seconds, escape_xml(run.provenance.started_at),
        escape_xml(run.provenance.host));
    out += cases + "  </testsuite>\n</testsuites>\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_junit_exporter() { return std::make_unique<JunitExporter>(); }

}  // namespace hangbench::report
