// A matched shape, attributed: which known hang it is, which NCCL the process runs
// (version and SHA-256), and whether that build is in the measured affected range,
// the claimed one, or neither. Pure lookups in the embedded catalog: microseconds
// (benchmarks/attribution_benchmark.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "hangbench/catalog.hpp"

namespace hangbench::catalog {

namespace {

bool affected(const Entry& e, const std::string& version) {
  const std::string standing = standing_of(e, version);
  return standing == "measured vulnerable" || standing == "in the measured affected range" ||
         standing == "in the claimed affected range";
}

}  // namespace

// The most specific entry wins: one whose typed facts the finding carries, before one
// that names none (the multi-communicator abort before the progress spin, both of
// which the same join shows), whatever their order in the catalog.
const Entry* entry_for(const std::string& rule, const std::string& title, const std::string& words,
                       const std::string& nccl_version, const std::vector<std::string>& facts) {
  const Entry* without_facts = nullptr;
  for (const auto& e : entries()) {
    if (std::find(e.rules.begin(), e.rules.end(), rule) == e.rules.end()) continue;
    if (!std::all_of(e.facts.begin(), e.facts.end(), [&](const std::string& needed) {
          return std::find(facts.begin(), facts.end(), needed) != facts.end();
        }))
      continue;
    if (!e.title_contains.empty() && title.find(e.title_contains) == std::string::npos) continue;
    if (!e.summary_contains.empty() && words.find(e.summary_contains) == std::string::npos) continue;
    if (e.only_in_affected_range && !affected(e, nccl_version)) continue;
    if (!e.facts.empty()) return &e;
    if (!without_facts) without_facts = &e;
  }
  return without_facts;
}

bool rule_needs_nccl_version(const std::string& rule) {
  for (const auto& e : entries())
    if (e.only_in_affected_range && std::find(e.rules.begin(), e.rules.end(), rule) != e.rules.end()) return true;
  return false;
}

namespace {

std::string evidence_of(const Entry& e, const std::string& standing) {
  if (standing.rfind("measured", 0) == 0 || standing.rfind("in the measured", 0) == 0) return e.measured.sweep;
  if (standing.find("claimed") != std::string::npos) return e.file;
  return "";
}

std::string library_words(const LibraryInUse& nccl) {
  std::string sha = nccl.sha256.empty() ? "" : ", sha256 " + nccl.sha256.substr(0, 12);
  return fmt::format("NCCL {} ({}{})", nccl.version.empty() ? "of unknown version" : nccl.version,
                     nccl.path.empty() ? "path unknown" : nccl.path, sha);
}

}  // namespace

Attribution attribute(const std::string& rule, const std::string& title, const std::string& words,
                      const LibraryInUse& nccl, const std::vector<std::string>& facts) {
  Attribution a;
  a.entry = entry_for(rule, title, words, nccl.version, facts);
  if (!a.entry) {
    a.sentence = fmt::format("no catalog entry for this shape (rule {}): not a known hang of the catalog", rule);
    // An entry with the same rule whose words did not match: say which, so that a reader
    // sees why (the socket shape outside NCCL is not NCCL's bug).
    for (const auto& e : entries()) {
      if (std::find(e.rules.begin(), e.rules.end(), rule) == e.rules.end()) continue;
      if (!e.facts.empty()) {
        a.sentence += fmt::format("; {} is this rule's shape only with the facts {}", e.id, fmt::join(e.facts, ", "));
        continue;
      }
      if (e.only_in_affected_range) {
        a.sentence += fmt::format("; {} is this rule's shape only with NCCL {} to {}", e.id,
                                  e.claimed_affected.empty() ? "?" : e.claimed_affected.front(),
                                  e.claimed_affected.empty() ? "?" : e.claimed_affected.back());
        continue;
      }
      a.sentence += fmt::format("; {} is this rule's shape only when {}", e.id,
                                !e.title_contains.empty() ? "its title names " + e.title_contains
                                                          : "its words name \"" + e.summary_contains + "\"");
    }
    return a;
  }
  const Entry& e = *a.entry;
  a.sentence = "matches hang " + e.id;
  a.brief = "known hang " + e.id;
  const bool release_bug = !e.claimed_affected.empty() || !e.measured.releases.empty();
  if (!release_bug) {
    a.sentence += "; measured: " + measured_range_text(e);
    a.brief += " (no library bug: `hangbench catalog show " + e.id + "`)";
    return a;
  }
  if (nccl.version.empty() && nccl.path.empty()) {
    a.sentence += "; which NCCL this process uses is unknown";
    a.brief += "; which NCCL runs is unknown";  // the NCCL line says what is known
  } else if (nccl.version.empty()) {
    a.sentence += fmt::format("; this process uses {}, whose version could not be read", library_words(nccl));
  } else {
    a.standing = standing_of(e, nccl.version);
    const std::string where = evidence_of(e, a.standing);
    const std::string standing = a.standing.empty() ? "outside the measured and the claimed ranges" : a.standing;
    // A fix that is a call order: the release is fixed only for a job that makes those calls.
    const bool fixed_release = a.standing.find("fixed") != std::string::npos;
    const std::string condition = fixed_release && !e.fix_needs.empty() ? " only with " + e.fix_needs : "";
    a.sentence += fmt::format("; this process uses {}, {}{}{}", library_words(nccl), standing, condition,
                              where.empty() ? "" : " (" + where + ")");
    a.brief += fmt::format("; NCCL {} here is {}{}", nccl.version, standing, condition);
  }
  const std::string fixed = !e.measured.fixed_from.empty() ? e.measured.fixed_from : e.claimed_fixed;
  if (!fixed.empty()) {
    const std::string with = e.fix_needs.empty() ? "" : ", with " + e.fix_needs;
    a.sentence += "; fixed from " + fixed + with;
    a.brief += "; fixed from " + fixed + with;
  }
  return a;
}

}  // namespace hangbench::catalog
