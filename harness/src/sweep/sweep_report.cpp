// The release table in JSON (hangbench.sweep/1) and Markdown (sweep_html.cpp: HTML),
// and the words of a row that every form shares (row_text.hpp).
#include <fmt/format.h>

#include <sstream>

#include "hangbench/provenance.hpp"
#include "hangbench/sweep.hpp"
#include "report/text.hpp"
#include "sweep/row_text.hpp"

namespace hangbench::sweep {

std::string static_text(const Row& row) {
  if (!row.judged()) return "";
  std::string text = "shutdown() in ncclSocketClose: " + validate::to_string(row.reading.fix);
  if (!row.reading.gpu_code_problem.empty()) text += "; " + row.reading.gpu_code_problem;
  return text;
}

std::string verdict_text(const Row& row) {
  if (!row.judged()) return "not run: " + row.problem;
  std::string text = validate::to_string(row.decision.verdict);
  if (row.decision.verdict == validate::Verdict::Inconclusive) text += ": " + row.decision.reason;
  if (!row.decision.disagreement.empty()) text += " (static reading: " + row.decision.disagreement + ")";
  return text;
}

std::string interval_text(const validate::ArmTally& arm) {
  const Interval ci = stats::clopper_pearson(arm.teardown_hangs, arm.counted());
  return fmt::format("[{:.2f}, {:.2f}]", ci.lo, ci.hi);
}

std::string short_sha(const Row& row) {
  const std::string& sha = row.facts.original_sha256.empty() ? row.inspected.sha256 : row.facts.original_sha256;
  return sha.substr(0, 12);
}

std::string argv_text(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

std::string slimmed_note(const Result& r) {
  std::vector<std::string> slimmed;
  for (const Row& row : r.rows) {
    if (row.facts.slimmed) slimmed.push_back(row.facts.release);
  }
  if (slimmed.empty()) return "";
  std::string list;
  for (const auto& s : slimmed) list += (list.empty() ? "" : ", ") + s;
  return "Slimmed for transport (GPU code of other architectures zeroed; host code, layout and the kept SASS "
         "untouched; SHA-256 column is the library as shipped): " +
         list + ".";
}

std::string trials_text(const Result& r) {
  if (r.reference_trials == 0 || r.reference_trials == r.trials) return fmt::format("{} trials", r.trials);
  return fmt::format("{} trials ({} per reference)", r.trials, r.reference_trials);
}

std::string hang_cell_text(const HangCell& cell) {
  if (cell.p_vs_fixed.empty()) return cell.verdict;
  return fmt::format("{} (p = {} vs fixed, {} vs vulnerable)", cell.verdict, cell.p_vs_fixed, cell.p_vs_vulnerable);
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& row : r.rows) {
    nlohmann::json j = {{"release", row.facts.release},
                        {"package", row.facts.package},
                        {"wheel", row.facts.wheel},
                        {"cuda_build", row.facts.cuda_build},
                        {"library", row.facts.path},
                        {"slimmed", row.facts.slimmed},
                        {"original_sha256", row.facts.original_sha256},
                        {"library_sha256", row.inspected.sha256},
                        {"problem", row.problem}};
    if (row.judged()) {
      const Interval ci = stats::clopper_pearson(row.arm.teardown_hangs, row.arm.counted());
      j["static"] = {{"version", row.reading.version},
                     {"socket_close_calls_shutdown", validate::to_string(row.reading.fix)},
                     {"imports_shutdown", row.reading.imports_shutdown},
                     {"gpu_code_problem", row.reading.gpu_code_problem}};
      j["teardown_hangs"] = row.arm.teardown_hangs;
      j["counted"] = row.arm.counted();
      j["passed"] = row.arm.passed;
      j["before_teardown"] = row.arm.before_teardown;
      j["stopped_before_teardown"] = row.arm.stopped;
      j["teardown_failures"] = row.arm.teardown_failures;
      j["infra"] = row.arm.infra;
      j["hang_rate_ci95"] = {ci.lo, ci.hi};
      j["verdict"] = validate::to_string(row.decision.verdict);
      j["reason"] = row.decision.reason;
      j["disagreement"] = row.decision.disagreement;
      j["p_vs_vulnerable"] = validate::p_json(row.decision.vs_vulnerable);
      j["p_vs_fixed"] = validate::p_json(row.decision.vs_fixed);
      j["source"] = row.arm.source;  // a resumed sweep reuses the rows an earlier run judged
    }
    rows.push_back(std::move(j));
  }
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : r.changes) changes.push_back({{"release", c.release}, {"before", c.before}, {"after", c.after}});
  auto reference = [](const validate::ArmTally& a) {
    return nlohmann::json{{"library", a.library},
                          {"sha256", a.sha256},
                          {"teardown_hangs", a.teardown_hangs},
                          {"counted", a.counted()},
                          {"before_teardown", a.before_teardown},
                          {"reused", a.reused},
                          {"source", a.source}};
  };
  nlohmann::json out = {{"schema", kSchema},
                        {"sentence", r.sentence},
                        {"rows", rows},
                        {"references",
                         {{"vulnerable", reference(r.vulnerable)},
                          {"fixed", reference(r.fixed)},
                          {"separate", r.references_separate},
                          {"p", stats::format_p(r.references)}}},
                        {"trials_per_library", r.trials},
                        {"trials_per_reference", r.reference_trials},
                        {"alpha", r.alpha},
                        {"hang_timeout_s", r.timeout_s},
                        {"teardown_phase", r.teardown_phase},
                        {"teardown_timeout_s", r.teardown_timeout_s},
                        {"workload", r.workload_command},
                        {"seconds", r.seconds},
                        {"run_id", r.run_id},
                        {"run_dir", r.run_dir},
                        {"history_changes", changes},
                        {"exit_code", exit_code_of(r)},
                        {"argv", r.argv},
                        {"provenance", provenance_json(r.provenance)}};
  if (!r.hang.empty()) out["hang"] = r.hang;  // the catalog entry of the rows' columns
  if (!r.hangs.empty()) {
    nlohmann::json columns = nlohmann::json::array();
    for (const HangColumn& c : r.hangs) {
      nlohmann::json cells = nlohmann::json::array();
      for (size_t i = 0; i < c.cells.size() && i < r.rows.size(); ++i)
        cells.push_back({{"release", r.rows[i].facts.release},
                         {"package", r.rows[i].facts.package},
                         {"library", r.rows[i].facts.path},
                         {"verdict", c.cells[i].verdict},
                         {"verdict_word", c.references_separate ? verdict_word(c.cells[i].verdict) : "not judged"},
                         {"reason", c.references_separate ? verdict_reason(c.cells[i].verdict) : c.not_judged_why},
                         {"p_vs_fixed", c.cells[i].p_vs_fixed},
                         {"p_vs_vulnerable", c.cells[i].p_vs_vulnerable},
                         {"hangs", c.cells[i].hangs},
                         {"counted", c.cells[i].counted},
                         {"bytes", c.cells[i].bytes},
                         {"source", c.cells[i].source}});
      columns.push_back({{"id", c.id}, {"references_separate", c.references_separate}, {"cells", cells}});
    }
    out["hangs"] = columns;
    out["hang_summary"] = hang_summary(r);
  }
  return out;
}

namespace {

// The words of the table's phase columns: the teardown's, or those of the phase a catalog
// entry's reproducer hangs after (nccl-launch-blocking-proxy: `collective_begin`).
struct TableWords {
  std::string hangs, stopped_before, crashed, hung;
};

TableWords table_words(const Result& r) {
  if (validate::is_teardown_phase(r.teardown_phase))
    return {"teardown hangs", "stopped before teardown", "crashed in teardown", "hung in the teardown"};
  const std::string phase = "`" + r.teardown_phase + "`";
  return {"hangs after " + phase, "stopped before " + phase, "crashed after " + phase, "hung after " + phase};
}

}  // namespace

namespace {

// The release x known-hang table first: what a release note quotes.
void hang_table_markdown(std::ostream& md, const Result& r) {
  md << "# Release × known hang: " << hang_ids(r) << "\n\n";
  for (const auto& line : hang_summary(r)) md << "- " << line << "\n";
  md << "\n| release | build |";
  for (const auto& c : r.hangs) md << " " << c.id << " |";
  md << "\n|---|---|";
  for (size_t k = 0; k < r.hangs.size(); ++k) md << "---|";
  md << "\n";
  const FoldedTable t = fold_hang_table(r);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    md << "| " << (r.rows[i].facts.release.empty() ? "`" + r.rows[i].facts.path + "`" : r.rows[i].facts.release)
       << " | " << build_of(r.rows[i]) << " |";
    for (const auto& cell : t.cells[i]) md << " " << cell << " |";
    md << "\n";
  }
  if (!t.footnotes.empty()) {
    md << "\n";
    for (const auto& f : t.footnotes) md << f << "  \n";
  }
  md << "\nLegend:\n";
  for (const auto& line : hang_legend()) md << "- " << line << "\n";
  md << fmt::format("\n{} per library and entry, alpha {}. Details of the first entry's run follow.\n\n",
                    trials_text(r), r.alpha);
  md << "### Details: " << r.hangs.front().id << "\n\n";
}

}  // namespace

std::string static_header(const Result& r) {
  // The static check is nccl-socket-close-alias's (shutdown() in ncclSocketClose): say so
  // wherever the table is another entry's.
  if (r.hang.empty() || r.hang == "nccl-socket-close-alias") return "static reading";
  return "static check of nccl-socket-close-alias";
}

std::string to_markdown(const Result& r) {
  std::ostringstream md;
  if (!r.hangs.empty()) hang_table_markdown(md, r);
  md << r.sentence << "\n\n";
  const std::string verdict = r.hang.empty() ? "verdict" : "hang " + r.hang + ": verdict";
  const TableWords words = table_words(r);
  md << "| release | package | CUDA build | " << static_header(r) << " | " << words.hangs << " | 95% interval | "
     << words.stopped_before << " | " << words.crashed << " | " << verdict
     << " | p vs vulnerable | p vs fixed | SHA-256 (as shipped) |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& row : r.rows) {
    if (!row.judged()) {
      md << fmt::format("| {} | {} | {} |  |  |  |  |  | {} |  |  |  |\n",
                        row.facts.release.empty() ? "`" + row.facts.path + "`" : row.facts.release, row.facts.package,
                        row.facts.cuda_build, verdict_text(row));
      continue;
    }
    md << fmt::format("| {}{} | {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} | `{}` |\n", row.facts.release,
                      row.facts.slimmed ? " (slimmed)" : "", row.facts.package, row.facts.cuda_build, static_text(row),
                      row.arm.teardown_hangs, row.arm.counted(), interval_text(row.arm), row.arm.before_teardown,
                      row.arm.teardown_failures, verdict_text(row), stats::format_p(row.decision.vs_vulnerable),
                      stats::format_p(row.decision.vs_fixed), short_sha(row));
  }
  md << fmt::format(
      "\nReferences: vulnerable `{}` {}/{} {}, fixed `{}` {}/{} (p = {}{}). {} "
      "per library, Fisher's exact test (two-sided) at alpha {}; a trial hangs when it outlives {:.1f} s "
      "after `{}` (or {:.1f} s in all). Workload: `{} --nccl-lib=LIB`.\n",
      r.vulnerable.library, r.vulnerable.teardown_hangs, r.vulnerable.counted(), words.hung, r.fixed.library,
      r.fixed.teardown_hangs, r.fixed.counted(), stats::format_p(r.references),
      r.references_separate ? "" : ": they do not separate, no verdict holds", trials_text(r), r.alpha,
      r.teardown_timeout_s, r.teardown_phase, r.timeout_s, r.workload_command);
  if (const std::string note = slimmed_note(r); !note.empty()) md << "\n" << note << "\n";
  for (const auto& c : r.changes) {
    md << fmt::format("\n**History:** {} {}.\n", c.release,
                      c.before.empty() ? "is new and " + c.after : "changed from " + c.before + " to " + c.after);
  }
  md << fmt::format(
      "\nProvenance: `{}`; hangbench {} (commit {}); host {}, kernel {}; GPU {}; driver {}; run {} "
      "started {}; {:.1f} s.\n",
      argv_text(r.argv), r.provenance.hangbench_version, r.provenance.hangbench_commit, r.provenance.host,
      r.provenance.kernel, r.provenance.gpu.empty() ? "none" : r.provenance.gpu,
      r.provenance.driver.empty() ? "none" : r.provenance.driver, r.run_id, r.provenance.started_at, r.seconds);
  return md.str();
}

}  // namespace hangbench::sweep
