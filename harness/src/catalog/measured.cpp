// An entry's measured ranges, computed from the compact form of its results/ files,
// and where a given NCCL version stands against the measured and the claimed ranges.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "hangbench/catalog.hpp"

namespace hangbench::catalog {
namespace {

std::vector<long> numbers_of(const std::string& version) {
  std::vector<long> out;
  std::string part;
  std::istringstream in(version);
  while (std::getline(in, part, '.')) {
    if (part.rfind("post", 0) == 0) part = part.substr(4);  // 2.25.1.post1 after 2.25.1
    try {
      out.push_back(std::stol(part));
    } catch (const std::exception&) {
      out.push_back(0);
    }
  }
  return out;
}

bool is_fixed_verdict(const std::string& v) { return v == "fixed" || v == "not vulnerable"; }

}  // namespace

int compare_versions(const std::string& a, const std::string& b) {
  const auto x = numbers_of(a), y = numbers_of(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const long p = i < x.size() ? x[i] : -1, q = i < y.size() ? y[i] : -1;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

void apply_measured(Entry& entry, const nlohmann::json& compact) {
  Measured& m = entry.measured;
  if (compact.contains("sweep")) {
    const auto& s = compact["sweep"];
    m.sweep = s.value("path", m.sweep);
    m.sweep_found = s.value("found", false);
    for (const auto& row : s.value("rows", nlohmann::json::array())) {
      MeasuredRelease r;
      r.release = row.value("release", "");
      r.version = row.value("version", "");
      if (r.version.empty()) r.version = r.release;
      r.verdict = row.value("verdict", "");
      r.hangs = row.value("hangs", 0);
      r.counted = row.value("counted", 0);
      r.p_vs_fixed = row.value("p_vs_fixed", "");
      r.p_vs_vulnerable = row.value("p_vs_vulnerable", "");
      m.releases.push_back(r);
    }
  }
  if (compact.contains("runs")) {
    m.cells.clear();
    for (const auto& c : compact["runs"]) {
      MeasuredCell cell;
      cell.report = c.value("report", "");
      cell.cell = c.value("cell", "");
      cell.found = c.value("found", false);
      cell.n = c.value("n", 0);
      cell.hangs = c.value("hangs", 0);
      m.cells.push_back(cell);
    }
  }
  std::vector<MeasuredRelease> sorted = m.releases;
  std::stable_sort(sorted.begin(), sorted.end(), [](const MeasuredRelease& a, const MeasuredRelease& b) {
    return compare_versions(a.release, b.release) < 0;
  });
  m.releases = sorted;  // release order, also where `also` tables added releases
  for (const auto& r : sorted) {
    if (r.verdict == "vulnerable") {
      m.affected.push_back(r.release);
    } else if (is_fixed_verdict(r.verdict)) {
      m.fixed.push_back(r.release);
    } else if (r.verdict == "not affected") {
      m.not_affected.push_back(r.release);
    } else {
      m.unjudged.push_back(r.release);
    }
  }
  if (!m.affected.empty()) {
    for (const auto& r : sorted)
      if (is_fixed_verdict(r.verdict) && compare_versions(r.release, m.affected.back()) > 0) {
        m.fixed_from = r.release;
        break;
      }
  }
}

std::string hanging_runs_text(const std::vector<ReleaseVerdict>& in_release_order) {
  std::vector<std::pair<std::string, std::string>> runs;  // first, last
  std::vector<std::string> hanging;                       // each release once
  bool open = false;
  for (const auto& v : in_release_order) {
    if (v.state == ReleaseState::Hangs) {
      if (!hanging.empty() && hanging.back() == v.release) continue;  // another build of it
      hanging.push_back(v.release);
      if (open) {
        runs.back().second = v.release;
      } else {
        runs.push_back({v.release, v.release});
        open = true;
      }
    } else if (v.state == ReleaseState::Healthy && open && runs.back().second != v.release) {
      open = false;  // a healthy build of a release that hangs in another build does not break the run
    }
  }
  if (hanging.empty()) return "";
  std::string text;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    text += i == 0 ? "" : (i + 1 == runs.size() ? " and " : ", ");
    text += runs[i].first == runs[i].second ? runs[i].first : runs[i].first + " to " + runs[i].second;
  }
  if (hanging.size() > 1) text += fmt::format(" ({} releases)", hanging.size());
  return text;
}

std::string standing_of(const Entry& e, const std::string& version) {
  if (version.empty()) return "";
  const Measured& m = e.measured;
  for (const auto& r : m.releases) {
    if (r.version != version && r.release != version) continue;
    if (r.verdict == "vulnerable") return "measured vulnerable";
    if (is_fixed_verdict(r.verdict)) return "measured fixed";
    if (r.verdict == "not affected") return "measured not affected";
  }
  if (!m.affected.empty() && compare_versions(version, m.affected.front()) >= 0 &&
      compare_versions(version, m.affected.back()) <= 0)
    return "in the measured affected range";
  if (!m.fixed_from.empty() && compare_versions(version, m.fixed_from) >= 0 && !m.fixed.empty() &&
      compare_versions(version, m.fixed.back()) <= 0)
    return "in the measured fixed range";
  if (e.claimed_affected.size() == 2 && compare_versions(version, e.claimed_affected[0]) >= 0 &&
      compare_versions(version, e.claimed_affected[1]) <= 0)
    return "in the claimed affected range";
  if (!e.claimed_fixed.empty() && compare_versions(version, e.claimed_fixed) >= 0) return "claimed fixed";
  return "";
}

namespace {

std::string span_of_runs(const Measured& m) {
  std::vector<ReleaseVerdict> verdicts;
  for (const auto& r : m.releases)
    verdicts.push_back({r.release, r.verdict == "vulnerable" ? ReleaseState::Hangs
                                   : is_fixed_verdict(r.verdict) || r.verdict == "not affected"
                                       ? ReleaseState::Healthy
                                       : ReleaseState::Unjudged});
  return hanging_runs_text(verdicts);
}

std::string comma_list(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

std::string measured_range_text(const Entry& e) {
  const Measured& m = e.measured;
  std::vector<std::string> parts;
  if (!m.sweep.empty()) {
    if (!m.sweep_found) {
      parts.push_back("not measured yet: " + m.sweep + " is not in this checkout");
    } else {
      if (!m.affected.empty()) parts.push_back("vulnerable " + span_of_runs(m));
      if (!m.fixed_from.empty()) parts.push_back("fixed from " + m.fixed_from);
      if (!m.fixed.empty()) parts.push_back(fmt::format("{} release(s) judged fixed", m.fixed.size()));
      if (!m.not_affected.empty()) parts.push_back("not affected: " + comma_list(m.not_affected));
      if (!m.unjudged.empty()) parts.push_back("not judged: " + comma_list(m.unjudged));
      parts.back() += " (" + m.sweep + (m.also.empty() ? "" : " and " + comma_list(m.also)) + ")";
    }
  }
  bool none_hung = !m.cells.empty();
  for (const auto& c : m.cells) {
    parts.push_back(c.found ? fmt::format("{}/{} hung in cell {} ({})", c.hangs, c.n, c.cell, c.report)
                            : fmt::format("cell {} not found in {}", c.cell, c.report));
    none_hung = none_hung && c.found && c.hangs == 0;
  }
  // A claim tried and not seen: said in words, so no reader takes the counts for a measured range.
  if (none_hung && m.sweep.empty()) parts.push_back("not reproduced on this hardware: no trial of its cells hung");
  return parts.empty() ? "not measured" : comma_list(parts);
}

std::string claimed_range_text(const Entry& e) {
  std::string text;
  if (e.claimed_affected.size() == 2)
    text = fmt::format("affected {} to {}", e.claimed_affected[0], e.claimed_affected[1]);
  if (!e.claimed_fixed.empty()) text += (text.empty() ? "" : "; ") + std::string("fixed in ") + e.claimed_fixed;
  if (text.empty()) text = "no release range (not a library release bug)";
  return text + (e.claimed_source.empty() ? "" : " [" + e.claimed_source + "]");
}

}  // namespace hangbench::catalog
