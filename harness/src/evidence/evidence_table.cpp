#include "hangbench/evidence_table.hpp"

#include <fmt/format.h>

#include <set>

#include "hangbench/stats.hpp"
#include "report/text.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench::evidence {
namespace {

struct Pooled {
  long long hangs = 0, n = 0;
  int cells = 0;
};

// The axes that tell builds apart: those of the reference filter, else "build".
std::set<std::string> build_axes(const std::vector<EvidenceRun>& runs, const CellFilter& reference) {
  std::set<std::string> axes;
  for (const auto& [axis, value] : reference) axes.insert(axis);
  if (!axes.empty()) return axes;
  for (const EvidenceRun& r : runs)
    for (const Cell& c : r.summary->matrix.cells)
      if (c.params.count("build")) return {"build"};
  return axes;
}

std::string join_params(const Cell& cell, const std::set<std::string>& axes, bool inside) {
  std::string out;
  for (const auto& [axis, value] : cell.params)
    if (axes.count(axis) == static_cast<size_t>(inside)) out += (out.empty() ? "" : ", ") + axis + "=" + value;
  return out;
}

bool same_scenario(const Cell& x, const Cell& y, const std::set<std::string>& axes) {
  return join_params(x, axes, false) == join_params(y, axes, false);
}

Pooled pool_reference(const RunSummary& run, const Cell& cell, const CellFilter& reference,
                      const std::set<std::string>& axes) {
  Pooled p;
  for (const CellSummary& c : run.cells)
    if (report::cell_matches(*c.cell, reference) && same_scenario(*c.cell, cell, axes)) {
      p.hangs += c.hangs;
      p.n += c.n;
      ++p.cells;
    }
  return p;
}

std::string provenance_of(const EvidenceRun& r) {
  const Provenance& p = r.summary->provenance;
  std::string gpu = p.gpu.empty() ? "no GPU" : p.gpu + (p.driver.empty() ? "" : ", driver " + p.driver);
  std::string date = p.started_at.substr(0, 10);
  return fmt::format("`{}`: hangbench {} (commit {}), {}, {}, {}", r.id, p.hangbench_version, p.hangbench_commit, gpu,
                     p.host.empty() ? "unknown host" : p.host, date.empty() ? "undated" : date);
}

}  // namespace

std::optional<CellFilter> parse_cell_filter(const std::string& text, std::string* error) {
  CellFilter filter;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      if (error) *error = "'" + text + "': expected AXIS=VALUE[,AXIS=VALUE...], for example build=2.18.1";
      return std::nullopt;
    }
    filter[item.substr(0, eq)] = item.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return filter;
}

std::string render_evidence_markdown(const std::vector<EvidenceRun>& runs, const CellFilter& reference) {
  const std::set<std::string> axes = build_axes(runs, reference);
  const bool several_runs = runs.size() > 1;
  std::string out = several_runs ? "| run | build | scenario | hangs | crashed | failed | 95% CI | p vs reference |\n"
                                   "|---|---|---|--:|--:|--:|---|--:|\n"
                                 : "| build | scenario | hangs | crashed | failed | 95% CI | p vs reference |\n"
                                   "|---|---|--:|--:|--:|---|--:|\n";
  bool borrowed_reference = false;
  for (const EvidenceRun& r : runs) {
    for (const CellSummary& c : r.summary->cells) {
      std::string p_text = "–";
      if (!reference.empty() && report::cell_matches(*c.cell, reference)) {
        p_text = "reference";
      } else if (!reference.empty()) {
        Pooled ref = pool_reference(*r.summary, *c.cell, reference, axes);
        bool borrowed = ref.cells == 0;
        if (borrowed)  // this run lacks the reference: pool it from every run given
          for (const EvidenceRun& other : runs) {
            Pooled more = pool_reference(*other.summary, *c.cell, reference, axes);
            ref.hangs += more.hangs;
            ref.n += more.n;
            ref.cells += more.cells;
          }
        if (c.n > 0 && ref.n > 0) {
          auto f = stats::fisher_exact({c.hangs, c.n}, {ref.hangs, ref.n});
          p_text = stats::format_p(f.p_two_sided, f.log10_p_two_sided) + (borrowed ? " †" : "");
          borrowed_reference |= borrowed;
        }
      }
      // One build axis reads best as its bare value ("2.17.1").
      std::string build = axes.size() == 1 && c.cell->params.count(*axes.begin()) ? c.cell->params.at(*axes.begin())
                                                                                  : join_params(*c.cell, axes, true);
      std::string scenario = join_params(*c.cell, axes, false);
      out += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} |\n",
                         several_runs ? "`" + report::escape_markdown_cell(r.id) + "` | " : "",
                         report::escape_markdown_cell(build.empty() ? "–" : build),
                         report::escape_markdown_cell(scenario.empty() ? "–" : scenario),
                         report::format_rate(c.hangs, c.n), c.crashed, c.failed,
                         report::format_ci_percent(c.hang_ci95, c.n), p_text);
    }
  }
  out += "\n";
  if (!reference.empty())
    out += fmt::format(
        "p: Fisher's exact test, two-sided, of each row against the reference `{}` in the same scenario{}.\n",
        report::filter_label(reference), borrowed_reference ? " († reference pooled from all runs given)" : "");
  out += "Hangs: trials that passed the hang timeout; INFRA trials excluded. 95% CI: Clopper-Pearson. " +
         report::counting_note() + "\n\n";
  out += "Provenance:\n";
  for (const EvidenceRun& r : runs) out += "- " + provenance_of(r) + "\n";
  return out;
}

}  // namespace hangbench::evidence
