// The release table's first line, computed from its rows (never typed).
#include <fmt/format.h>

#include <map>

#include "hangbench/sweep.hpp"

namespace hangbench::sweep {
namespace {

using validate::Verdict;

std::string label(const Row& row) { return row.facts.release.empty() ? row.facts.path : row.facts.release; }

// Why a row could not be judged, in a few words ("" when it was).
std::string not_judged_because(const Row& row) {
  if (!row.judged()) return row.problem;
  if (row.decision.verdict != Verdict::Inconclusive) return "";
  if (row.arm.before_teardown > 0) {
    return row.reading.gpu_code_problem.empty() ? "stopped " + row.decision.words.before
                                                : "did not initialise on this GPU: " + row.reading.gpu_code_problem;
  }
  if (row.arm.counted() == 0) return "no trial could run";
  if (row.arm.teardown_failures > 0) return "crashed or failed " + row.decision.words.during;
  if (!row.decision.references_reached_phase) return "no trial of a reference got far enough to hang";
  if (!row.decision.references_separate) return "the references did not separate";
  return "not separated from the references";
}

// Runs of consecutive rows (in release order) in the same category: "2.16.2 to 2.17.1".
std::vector<std::string> ranges(const std::vector<Row>& rows, const std::vector<std::string>& category,
                                const std::string& wanted) {
  std::vector<std::string> out;
  for (size_t i = 0; i < rows.size();) {
    if (category[i] != wanted) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < rows.size() && category[j + 1] == wanted) ++j;
    out.push_back(i == j ? label(rows[i]) : label(rows[i]) + " to " + label(rows[j]));
    i = j + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

}  // namespace

std::string summary_sentence(const std::vector<Row>& rows, const std::string& what) {
  if (rows.empty()) return "No library was swept.";
  std::vector<std::string> category;
  std::map<std::string, std::vector<std::string>> unjudged;  // reason -> releases
  for (const Row& row : rows) {
    const std::string why = not_judged_because(row);
    if (!why.empty()) {
      category.push_back("unjudged");
      unjudged[why].push_back(label(row));
    } else {
      category.push_back(validate::to_string(row.decision.verdict));
    }
  }
  std::vector<std::string> clauses;
  const auto vulnerable = ranges(rows, category, "vulnerable");
  clauses.push_back(vulnerable.empty()
                        ? "No swept release hangs " + what
                        : "NCCL " + join(vulnerable) + " hang" +
                              (vulnerable.size() == 1 && vulnerable[0].find(" to ") == std::string::npos ? "s" : "") +
                              " " + what + " (vulnerable)");
  const auto fixed = ranges(rows, category, "fixed");
  // "fixed from X on" when every judged release after the first fixed one is fixed.
  std::string last_judged;
  for (const auto& c : category) {
    if (c != "unjudged") last_judged = c;
  }
  if (fixed.size() == 1 && last_judged == "fixed") {
    clauses.push_back("fixed from " + fixed[0].substr(0, fixed[0].find(" to ")) + " on");
  } else if (!fixed.empty()) {
    clauses.push_back("fixed: " + join(fixed));
  }
  const auto not_vulnerable = ranges(rows, category, "not vulnerable");
  if (!not_vulnerable.empty()) {
    clauses.push_back("not vulnerable, fix unreadable: " + join(not_vulnerable));
  }
  const auto not_affected = ranges(rows, category, "not affected");
  if (!not_affected.empty()) {
    clauses.push_back(join(not_affected) +
                      (not_affected.size() == 1 && not_affected[0].find(" to ") == std::string::npos ? " is" : " are") +
                      " not affected (no shutdown() in ncclSocketClose, but the teardown does not wait for its peers)");
  }
  std::vector<std::string> could_not;
  for (const auto& [why, releases] : unjudged) could_not.push_back(join(releases) + " (" + why + ")");
  if (!could_not.empty()) clauses.push_back("could not judge " + join(could_not));
  std::string sentence;
  for (size_t i = 0; i < clauses.size(); ++i) sentence += (i == 0 ? "" : "; ") + clauses[i];
  return sentence + ".";
}

}  // namespace hangbench::sweep
