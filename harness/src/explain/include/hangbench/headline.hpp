// The findings said in words: the headline, the summary paragraph, who holds each
// connection, and the measured remedies of a known hang.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hangbench/findings.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// The headline, at most five lines: the hang's name, who waits (rank, pid, thread,
// Python frame), who holds it, the NCCL library in use, which known hang of the
// catalog it is and where that library stands against its ranges, and what to do (each remedy
// with the measured result in results/ that backs it). Empty when nothing is hung.
// The hang the headline tells: a catalogued one first, then collective-mismatch, p2p-unmatched,
// gil-convoy, missing-rank, blocked-by-stopped, wait-cycle, then any other; nullptr when none.
const Finding* headline_finding(const Snapshot& s, const std::vector<Finding>& findings);
// The same choice over findings of several snapshots (a Slurm job's nodes and its
// cross-rank findings), where no one snapshot holds every subject.
const Finding* headline_finding(const std::vector<Finding>& findings);
// At most kHeadlineCharacters characters in all (newlines counted), in plain words.
std::vector<std::string> headline_lines(const Snapshot& s, const std::vector<Finding>& findings);
inline constexpr std::size_t kHeadlineCharacters = 600;
// Cuts the longest lines first, at a space, with " ...", until the lines and the newlines
// between them are at most `most_characters` characters (UTF-8 characters, not bytes).
void fit_headline(std::vector<std::string>& lines, std::size_t most_characters);
// The whole attribution of a catalogued finding, which the headline only abridges: "matches
// hang X; this process uses NCCL 2.17.1 (PATH, sha256 ...), measured vulnerable (REPORT); fixed from Y".
std::string known_hang_sentence(const Snapshot& s, const Finding& f);
// A stack's words without C++ template arguments and parameter lists:
// "c10::impl::BoxedKernelWrapper<...>::call(...)" -> "c10::impl::BoxedKernelWrapper::call";
// a Python frame's "`f` (main.py:41)" is kept.
std::string plain_function_names(const std::string& text);
// A remedy and the measurement that backs it ("upgrade to 2.18.1 or later",
// "results/.../report.md", "2.17.1 vs 2.17.1+backport, ...", "40/40", "0/40").
struct Remedy {
  std::string action;
  std::string report;      // a report.md under results/, relative to the checkout
  std::string comparison;  // the row of its comparison table
  std::string a_hangs, b_hangs;
};
// The remedies for a finding's rule (and, for NCCL, whether the library lacks the fix).
std::vector<Remedy> remedies_for(const std::string& rule);
// The one-paragraph summary: the first finding's summary, or the connection
// holder sentences, or "no known hang shape matched".
std::string summary_paragraph(const Snapshot& s, const std::vector<Finding>& findings);
// "the ESTABLISHED connection A <-> B is held open by pid ..." for each connection
// whose ends are held by more than one process or by a process that is not a target.
std::vector<std::string> holder_sentences(const Snapshot& s);
// The same sentences for the connections among launcher processes only (plumbing.hpp),
// which the renderings list apart from the job's.
std::vector<std::string> launcher_holder_sentences(const Snapshot& s);

}  // namespace hangbench::diagnose
