// The release x known-hang table: see hangbench/sweep.hpp.
#include <fmt/format.h>

#include <map>

#include "hangbench/catalog.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::sweep {

namespace {

std::string release_of(const Row& row) { return row.facts.release.empty() ? row.facts.path : row.facts.release; }

bool hangs(const std::string& word) { return word == "vulnerable"; }
bool healthy(const std::string& word) { return word == "fixed" || word == "not affected" || word == "not vulnerable"; }

}  // namespace

std::string build_of(const Row& row) {
  const std::string prefix = "nvidia-nccl-";
  return row.facts.package.rfind(prefix, 0) == 0 ? row.facts.package.substr(prefix.size()) : row.facts.package;
}

std::string verdict_word(const std::string& text) {
  for (const char* word : {"not affected", "not vulnerable", "not run", "vulnerable", "fixed", "inconclusive"})
    if (text.rfind(word, 0) == 0) return word;
  return text;
}

std::string verdict_reason(const std::string& text) {
  const auto colon = text.find(": ");
  const std::string word = verdict_word(text);
  if ((word != "inconclusive" && word != "not run") || colon == std::string::npos) return "";
  return text.substr(colon + 2);
}

std::string hang_ids(const Result& r) {
  std::string ids;
  for (const auto& c : r.hangs) ids += (ids.empty() ? "" : ", ") + c.id;
  return ids;
}

std::vector<std::string> hang_summary(const Result& r) {
  std::vector<std::string> lines;
  for (const auto& c : r.hangs) {
    if (!c.references_separate) {
      lines.push_back(c.id + ": not judged on any release (" +
                      (c.references_reached_phase
                           ? "its references did not separate on this machine"
                           : "no trial of its references got far enough to hang on this machine") +
                      ")");
      continue;
    }
    // Rows are in release order; a release of several builds (cu11, cu12, cu13) is named once.
    std::vector<std::string> vulnerable;
    std::vector<catalog::ReleaseVerdict> verdicts;
    size_t last_vulnerable_row = 0;
    int unjudged = 0;
    for (size_t i = 0; i < r.rows.size() && i < c.cells.size(); ++i) {
      const std::string word = verdict_word(c.cells[i].verdict);
      verdicts.push_back({release_of(r.rows[i]), hangs(word)     ? catalog::ReleaseState::Hangs
                                                 : healthy(word) ? catalog::ReleaseState::Healthy
                                                                 : catalog::ReleaseState::Unjudged});
      if (hangs(word)) {
        if (vulnerable.empty() || vulnerable.back() != release_of(r.rows[i]))
          vulnerable.push_back(release_of(r.rows[i]));
        last_vulnerable_row = i;
      }
      if (word == "inconclusive" || word == "not run") ++unjudged;
    }
    // Where the fix arrives: the first healthy release after the last one that hangs.
    std::string first_fixed;
    for (size_t i = last_vulnerable_row + 1; !vulnerable.empty() && i < r.rows.size() && i < c.cells.size(); ++i) {
      if (release_of(r.rows[i]) == vulnerable.back()) continue;
      if (healthy(verdict_word(c.cells[i].verdict))) {
        first_fixed = release_of(r.rows[i]);
        break;
      }
    }
    std::string line = c.id + ": ";
    if (vulnerable.empty()) {
      line += "hangs in none of the releases judged";
    } else {
      line += "hangs in " + catalog::hanging_runs_text(verdicts);
      line += first_fixed.empty() ? "; no later release judged fixed" : "; first fixed " + first_fixed;
    }
    if (unjudged > 0) line += fmt::format("; {} not judged", unjudged);  // builds: a release may have several
    lines.push_back(line);
  }
  return lines;
}

FoldedTable fold_hang_table(const Result& r) {
  FoldedTable t;
  std::map<std::string, size_t> numbers;  // reason -> footnote number
  auto footnote = [&](const std::string& reason) {
    auto [it, inserted] = numbers.emplace(reason, t.footnotes.size() + 1);
    if (inserted) t.footnotes.push_back(fmt::format("[{}] {}", it->second, reason));
    return fmt::format("[{}]", it->second);
  };
  for (size_t i = 0; i < r.rows.size(); ++i) {
    std::vector<std::string> row;
    for (const auto& c : r.hangs) {
      if (i >= c.cells.size()) {
        row.push_back("");
        continue;
      }
      const HangCell& cell = c.cells[i];
      const std::string word = verdict_word(cell.verdict);
      std::string text = word;
      if (!c.references_separate) {
        text = "not judged " + footnote(c.not_judged_why);
      } else if (cell.verdict.find(" reference (") != std::string::npos) {
        text = cell.verdict;  // a reference's own row: its role and count, no p against itself
      } else if (const std::string reason = verdict_reason(cell.verdict); !reason.empty()) {
        text += " " + footnote(reason);
      } else if (!cell.p_vs_fixed.empty() && (hangs(word) || healthy(word))) {
        text += fmt::format(" (p {} / {})", hangs(word) ? cell.p_vs_fixed : cell.p_vs_vulnerable,
                            hangs(word) ? cell.p_vs_vulnerable : cell.p_vs_fixed);
      }
      if (!cell.bytes.empty()) text += "; bytes: " + cell.bytes;
      row.push_back(text);
    }
    t.cells.push_back(std::move(row));
  }
  return t;
}

const std::vector<std::string>& hang_legend() {
  static const std::vector<std::string> legend = {
      "vulnerable: the release hangs as often as the entry's vulnerable reference and significantly more than its "
      "fixed one (p: against the fixed reference / against the vulnerable one)",
      "fixed: it hangs as rarely as the fixed reference and significantly less than the vulnerable one (p: against "
      "the vulnerable reference / against the fixed one); not affected: the same, though its bytes lack the fix "
      "(the path that hangs is not there yet)",
      "inconclusive, not run, not judged: no verdict; the footnote says why",
      "bytes: the entry's own check of the library's bytes (`hangbench catalog check`: has the fix, lacks the fix, "
      "cannot tell; affected or not affected for a change no release fixes), in the columns of entries that have one",
      "Fisher's exact test, two-sided, at the alpha below; each entry's own reproducer and references "
      "(catalog/<id>.toml)"};
  return legend;
}

}  // namespace hangbench::sweep
