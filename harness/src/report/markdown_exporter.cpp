// Release-notes-ready Markdown: provenance header, cell table, comparisons and
// the evidence of one hung trial. GitHub-flavoured tables, no HTML.
#include <fmt/format.h>

#include "hangbench/stats.hpp"
#include "report/exporters.hpp"
#include "report/text.hpp"

namespace hangbench::report {
namespace {

std::string short_hash(const std::string& sha256) { return sha256.substr(0, 12); }

std::string provenance_table(const RunSummary& run) {
  const Provenance& p = run.provenance;
  int counted = 0;
  for (const CellSummary& c : run.cells) counted += c.n;
  std::string out = "| | |\n|---|---|\n";
  out += fmt::format("| What ran | matrix `{}` (sha256 `{}`), {} cells, {} trials ({} counted, INFRA excluded) |\n",
                     escape_markdown_cell(run.matrix.path),
                     short_hash(p.matrix_sha256.empty() ? run.matrix.sha256 : p.matrix_sha256), run.cells.size(),
                     run.trials.size(), counted);
  std::string gpu = p.gpu.empty() ? "no GPU"
                                  : p.gpu + (p.driver.empty() ? "" : ", driver " + p.driver) +
                                        (p.cuda.empty() ? "" : ", CUDA " + p.cuda);
  std::string argv;
  for (const std::string& word : p.argv) argv += (argv.empty() ? "" : " ") + word;
  out += fmt::format("| On what | {} (kernel {}); {} |\n", escape_markdown_cell(p.host), escape_markdown_cell(p.kernel),
                     escape_markdown_cell(gpu));
  out += fmt::format("| When | {} |\n", escape_markdown_cell(p.started_at));
  std::string command = argv.empty() ? "not recorded" : "`" + escape_markdown_cell(argv) + "`";
  if (!p.shard_commands.empty()) {  // a merged run: say so, and what each shard ran
    command += fmt::format(", merging {} shards:", p.shard_commands.size());
    for (size_t i = 0; i < p.shard_commands.size(); ++i)
      command += fmt::format("{} {}. `{}`", i ? ";" : "", i, escape_markdown_cell(p.shard_commands[i]));
  }
  out += fmt::format("| Command | {} |\n", command);
  out += fmt::format("| Commit | hangbench {} ({}) |\n", escape_markdown_cell(p.hangbench_version),
                     escape_markdown_cell(p.hangbench_commit));
  out += fmt::format(
      "| Status | {} |\n",
      run.complete ? "complete" : "incomplete (running, or stopped: `hangbench run --resume --out DIR` continues it)");
  for (const auto& [path, hash] : p.library_hashes)
    out += fmt::format("| Library | `{}` sha256 `{}` |\n", escape_markdown_cell(path), short_hash(hash));
  return out;
}

std::string cell_table(const RunSummary& run) {
  std::string out =
      "| cell | n | hangs | crashed | failed | 95% CI | wall p50 / p90 (s) | teardown p50 / p90 (s) | expect | verdict "
      "|\n"
      "|---|--:|--:|--:|--:|---|---|---|---|---|\n";
  for (const CellSummary& c : run.cells)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", escape_markdown_cell(c.cell->id), c.n,
                       format_rate(c.hangs, c.n), c.crashed, c.failed, format_ci_percent(c.hang_ci95, c.n),
                       format_p50_p90(c.wall_s), format_p50_p90(c.teardown_s), expectation_label(c.cell->expect),
                       c.verdict == Verdict::None ? cell_verdict_label(c) : "**" + cell_verdict_label(c) + "**");
  return out;
}

std::string comparison_table(const RunSummary& run) {
  std::string out = fmt::format(
      "Fisher's exact test, cells pooled per side; Holm's correction across the {} comparisons of this run with "
      "trials on both sides (a comparison with an empty side reads \"not run\"). {}\n\n"
      "| comparison | a hangs | a crashed / failed | b hangs | b crashed / failed | p two-sided | p (a > b) | "
      "p (a < b) | odds ratio | Holm p |\n"
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
      tested_comparisons(run), counting_note());
  for (const ComparisonResult& r : run.comparisons) {
    if (!r.tested()) {
      out += fmt::format("| {} | {} | {} / {} | {} | {} / {} | not run | not run | not run | not run | not run |\n",
                         escape_markdown_cell(comparison_label(r)), format_rate(r.a_hangs, r.a_n), r.a_crashed,
                         r.a_failed, format_rate(r.b_hangs, r.b_n), r.b_crashed, r.b_failed);
      continue;
    }
    out += fmt::format(
        "| {} | {} | {} / {} | {} | {} / {} | {} | {} | {} | {} | {} |\n", escape_markdown_cell(comparison_label(r)),
        format_rate(r.a_hangs, r.a_n), r.a_crashed, r.a_failed, format_rate(r.b_hangs, r.b_n), r.b_crashed, r.b_failed,
        stats::format_p(r.p_two_sided, r.log10_p_two_sided), stats::format_p(r.p_a_greater, r.log10_p_a_greater),
        stats::format_p(r.p_a_less, r.log10_p_a_less), stats::format_odds_ratio(r.odds_ratio),
        stats::format_p(r.p_holm, r.log10_p_holm));
  }
  return out;
}

class MarkdownExporter : public Exporter {
 public:
  std::string format() const override { return "markdown"; }
  std::string extension() const override { return ".md"; }

  std::string render(const RunSummary& run) const override {
    std::string out = fmt::format("## hangbench: {}\n\n", run.matrix.name);
    out += provenance_table(run) + "\n**" + run_summary_line(run) + "**\n\n### Cells\n\n" + cell_table(run);
    for (const CellSummary& c : run.cells)
      if (c.verdict == Verdict::Contradicted)
        out += fmt::format("\n**CONTRADICTED** `{}`: {}.\n", c.cell->id, c.verdict_reason);
    for (const CellSummary& c : run.cells)
      if (c.infra > 0)
        out += fmt::format("\n**INFRA** `{}`: {} trial(s) could not run: {}\n", c.cell->id, c.infra,
                           one_line(c.infra_reason));
    if (!run.comparisons.empty()) out += "\n### Comparisons\n\n" + comparison_table(run);
    for (const CellSummary& c : run.cells) {
      if (c.hangs == 0) continue;
      out += fmt::format("\n### Evidence of a hung trial\n\n`{}`{}:\n\n> {}\n", c.cell->id,
                         c.evidence_dir.empty() ? "" : fmt::format(" (evidence in `{}`)", c.evidence_dir),
                         c.evidence_example.empty() ? "(no evidence summary recorded)" : one_line(c.evidence_example));
      break;  // one example keeps the note short; the HTML report has them all
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_markdown_exporter() { return std::make_unique<MarkdownExporter>(); }

}  // namespace hangbench::report
