#include "report/text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace hangbench::report {

std::string format_rate(int hangs, int n) { return fmt::format("{}/{}", hangs, n); }

std::string format_ci_percent(const Interval& ci, int n) {
  if (n == 0) return "n/a";
  return fmt::format("{:.1f}–{:.1f} %", 100 * ci.lo, 100 * ci.hi);
}

std::string format_seconds(double seconds) {
  if (seconds != 0 && std::fabs(seconds) < 0.1) return fmt::format("{:.3f}", seconds);
  return fmt::format("{:.2f}", seconds);
}

std::string format_p50_p90(const Quantiles& q) {
  if (q.n == 0) return "–";
  return format_seconds(q.p50) + " / " + format_seconds(q.p90);
}

std::string expectation_label(Expectation e) {
  std::string s = to_string(e);
  return s.empty() ? "–" : s;
}

std::string verdict_label(Verdict v) {
  std::string s = to_string(v);
  return s.empty() ? "–" : s;
}

std::string crash_note(int crashed, int failed) {
  std::string out;
  if (crashed > 0) out += fmt::format("{} crashed", crashed);
  if (failed > 0) out += fmt::format("{}{} failed", out.empty() ? "" : ", ", failed);
  return out;
}

std::string verdict_with_crashes(Verdict v, int crashed, int failed) {
  std::string note = crash_note(crashed, failed);
  if (v == Verdict::None) return note.empty() ? "–" : note;
  return verdict_label(v) + (note.empty() ? "" : ", " + note);
}

std::string cell_verdict_label(const CellSummary& c) { return verdict_with_crashes(c.verdict, c.crashed, c.failed); }

std::string counting_note() {
  return "Crashed and failed trials count in n as trials that did not hang; INFRA trials are left out.";
}

std::string run_summary_line(const RunSummary& run) {
  int confirmed = 0, contradicted = 0, inconclusive = 0, none = 0;
  int crashed = 0, failed = 0, infra = 0, cells_with_crashes = 0;
  for (const CellSummary& c : run.cells) {
    confirmed += c.verdict == Verdict::Confirmed;
    contradicted += c.verdict == Verdict::Contradicted;
    inconclusive += c.verdict == Verdict::Inconclusive;
    none += c.verdict == Verdict::None;
    crashed += c.crashed;
    failed += c.failed;
    infra += c.infra;
    cells_with_crashes += c.crashed + c.failed > 0;
  }
  std::string out = fmt::format("{} cells: {} confirmed, {} contradicted, {} inconclusive", run.cells.size(), confirmed,
                                contradicted, inconclusive);
  if (none > 0) out += fmt::format(", {} without expectation", none);
  out += fmt::format("; {} crashed and {} failed trial{} in {} cell{}", crashed, failed,
                     crashed + failed == 1 ? "" : "s", cells_with_crashes, cells_with_crashes == 1 ? "" : "s");
  if (infra > 0) out += fmt::format("; {} INFRA", infra);
  if (!run.complete) out += " (incomplete)";
  return out;
}

std::string outcome_mix(const CellSummary& c) {
  std::string out;
  auto add = [&](int count, Outcome o) {
    if (count == 0) return;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", count, to_string(o));
  };
  add(c.hangs, Outcome::Hang);
  add(c.passed, Outcome::Passed);
  add(c.crashed, Outcome::Crashed);
  add(c.failed, Outcome::Failed);
  add(c.infra, Outcome::Infra);
  return out.empty() ? "no trials" : out;
}

std::string provenance_line(const Provenance& p) {
  std::string gpu = p.gpu.empty() ? "no GPU"
                                  : p.gpu + (p.driver.empty() ? "" : ", driver " + p.driver) +
                                        (p.cuda.empty() ? "" : ", CUDA " + p.cuda);
  return fmt::format("{} ({}), {}, started {}, hangbench {} ({})", p.host.empty() ? "unknown host" : p.host,
                     p.kernel.empty() ? "unknown kernel" : p.kernel, gpu, p.started_at, p.hangbench_version,
                     p.hangbench_commit);
}

std::string filter_label(const std::map<std::string, std::string>& filter) {
  std::string out;
  for (const auto& [axis, value] : filter) out += (out.empty() ? "" : ",") + axis + "=" + value;
  return out.empty() ? "(all cells)" : out;
}

std::string comparison_label(const ComparisonResult& r) {
  if (r.comparison == nullptr) return "";
  if (!r.comparison->name.empty()) return r.comparison->name;
  return filter_label(r.comparison->a) + " vs " + filter_label(r.comparison->b);
}

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control bytes even when escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string escape_markdown_cell(const std::string& text) {
  std::string out;
  for (char c : one_line(text)) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  return out;
}

}  // namespace hangbench::report
