// The known-hang catalog: one TOML file per known hang in catalog/ (id, mechanism,
// upstream references, reproducer, static check, the diagnose rules that see it,
// remedies) and the ranges hangbench measured, computed from the results/ files an
// entry names. Both are embedded in the binary at build time (diagnose and sweep
// work away from the checkout); catalog_embed_test fails when they drift.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hangbench::catalog {

struct Reference {
  std::string kind;  // "issue", "pull", "commit"
  std::string url;
  std::string what;
};

struct Remedy {
  std::string action;
  bool upgrade = false;   // "upgrade NCCL": no remedy for a library that already has the fix
  bool measured = false;  // false: `why` says what is missing
  std::string why;
  std::string report;  // results/.../report.md
  std::string comparison;
  // "K/N" as its comparison's report gives them; parse_entry refuses a measured remedy
  // whose tallies are no "K/N" or whose two sides hung alike (no remedy).
  std::string a_hangs, b_hangs;
};

// Two "K/N" tallies, the one that hung less first ("0/40", "40/40"): a remedy's side is the
// one that hung less, whichever order its comparison names them in. None when either is
// no tally.
std::optional<std::pair<std::string, std::string>> hung_less_first(const std::string& a_hangs,
                                                                   const std::string& b_hangs);

struct Reproducer {
  std::string workload;  // a program under workloads/<name>/
  std::vector<std::string> args;
  std::string phase;                 // a trial hangs for this entry only after this phase
  double phase_timeout_s = 0;        // seconds a trial may live after `phase` in a sweep; 0 = the sweep's
  std::string vulnerable_reference;  // pinned variant ("2.17.1") or "wheel:2.16.5" (a swept library)
  std::string fixed_reference;
  std::string matrix;
  std::vector<std::string> filter;
  std::string note;
  bool sweepable() const { return !workload.empty() && !vulnerable_reference.empty() && !fixed_reference.empty(); }
};

// One release's verdict in a sweep, as the sweep's JSON says.
struct MeasuredRelease {
  std::string release;  // wheel version ("2.25.1.post1")
  std::string version;  // NCCL version of the library ("2.25.1"); "" when unread
  std::string verdict;  // "vulnerable", "fixed", "not affected", "not vulnerable", "inconclusive", "not run"
  std::string p_vs_fixed, p_vs_vulnerable;
  int hangs = 0, counted = 0;
};

// One cell of a run, as its report.json says.
struct MeasuredCell {
  std::string report;  // results/.../report.json
  std::string cell;
  int n = 0, hangs = 0;
  bool found = false;
};

// What results/ says about an entry, computed from the files it names.
struct Measured {
  std::string sweep;                      // results/.../release-table.json, "" none named
  bool sweep_found = false;               // false: named but not in the checkout the binary was built from
  std::vector<std::string> also;          // later sweeps of other releases, their rows merged in
  std::vector<MeasuredRelease> releases;  // in release order
  std::vector<MeasuredCell> cells;
  // Computed from `releases`.
  std::vector<std::string> affected;      // versions judged vulnerable, in order
  std::vector<std::string> fixed;         // judged fixed or not vulnerable
  std::vector<std::string> not_affected;  // not affected
  std::vector<std::string> unjudged;      // inconclusive or not run
  std::string fixed_from;                 // the first fixed release after the last affected one
};

struct Entry {
  std::string file;  // catalog/<id>.toml
  std::string id, title, mechanism;
  std::vector<std::string> claimed_affected;  // {first, last} releases, or empty (not a release bug)
  std::string claimed_fixed, claimed_source;
  // What the fixed releases need beyond themselves to end the hang (a call order the fix made
  // possible); empty: the release alone ends it. A job on a fixed release may still hang.
  std::string fix_needs;
  std::vector<Reference> upstream;
  Reproducer reproducer;
  std::string static_check, static_command, static_says;
  // A check of a C string in the library's read-only data: the release that carries it is
  // "fixed" or "affected" (static_present_means). Empty: the check is shutdown() in ncclSocketClose.
  std::string static_string, static_present_means;
  std::string static_none;         // why the library's bytes cannot tell, where there is no check
  std::vector<std::string> rules;  // diagnose rule ids that recognise it
  std::string title_contains, summary_contains, diagnose_note;
  // Typed facts the finding must carry, each whole ("nccl connection: collective"): what
  // tells apart two entries of one graph pattern.
  std::vector<std::string> facts;
  // The rules' shape is this entry only in a process whose NCCL is in the affected
  // range (a generic shape, such as a rank that died, that only these releases turn into a hang).
  bool only_in_affected_range = false;
  std::vector<Remedy> remedies;
  Measured measured;
};

// The shell commands that reproduce the entry on a GPU machine from nothing: fetch or
// build its references, then the sweep of its reproducer over them (a release bug), or
// its matrix (a usage pattern).
std::string reproduce_command(const Entry& e);

// Parses one entry (toml++). Throws ConfigError naming `file` and the line.
Entry parse_entry(const std::string& text, const std::string& file);

// The compact form of what an entry's results/ files say (release-table.json rows,
// report.json cells), read from `source_dir`: what the build embeds.
nlohmann::json extract_measured(const std::string& source_dir, const std::string& entry_text, const std::string& file);
// Fills entry.measured from that compact form, computing the ranges.
void apply_measured(Entry& entry, const nlohmann::json& compact);

// The embedded catalog (every entry, sorted by id) and its raw data.
const std::vector<Entry>& entries();
const Entry* find(const std::string& id);
struct EmbeddedFile {
  std::string file;  // catalog/<id>.toml
  std::string text;
  std::string measured;  // the compact JSON, dumped
};
const std::vector<EmbeddedFile>& embedded_files();

// Where a version stands against an entry: "measured vulnerable", "measured fixed",
// "measured not affected", "in the measured affected range" (not swept itself, between
// two vulnerable releases), "in the claimed affected range", "claimed fixed", or "".
std::string standing_of(const Entry& e, const std::string& version);
// One release's verdict for an entry, in release order, for the runs below.
enum class ReleaseState { Hangs, Healthy, Unjudged };
struct ReleaseVerdict {
  std::string release;
  ReleaseState state;
};
// The releases that hang as runs, a run broken only by a release judged healthy between
// them (an unjudged one does not break it), with their count: "2.18.1 to 2.18.3 and 2.26.2
// to 2.27.7 (7 releases)"; "2.25.1" for one. A release of several builds counts once; it
// hangs where any build does. "" when none hangs.
std::string hanging_runs_text(const std::vector<ReleaseVerdict>& in_release_order);
// -1, 0, 1 comparing dotted versions numerically ("2.9.1" < "2.16.2"); ".postN" counts after.
int compare_versions(const std::string& a, const std::string& b);

// Attribution of a live hang (diagnose): the entry whose rules saw the shape (rule id,
// and the entry's title_contains / summary_contains against the finding's words),
// and where the NCCL library in use stands against it.
struct LibraryInUse {
  std::string path, version, sha256;  // "" unknown
};
struct Attribution {
  const Entry* entry = nullptr;  // nullptr: no entry for this shape
  std::string standing;          // standing_of(), "" unknown
  std::string sentence;          // "matches hang nccl-socket-close-alias; this process uses NCCL 2.17.1 ..."
  // The same in a headline's few words, without paths and reports (FINDINGS has them):
  // "known hang nccl-socket-close-alias; NCCL 2.17.1 here is measured vulnerable; fixed from 2.18.1".
  std::string brief;
};
// `nccl_version` ("" unknown) decides for entries with only_in_affected_range.
const Entry* entry_for(const std::string& rule, const std::string& title, const std::string& words,
                       const std::string& nccl_version = "", const std::vector<std::string>& facts = {});
// Whether any entry with this rule needs the NCCL version to decide (reading it costs a file read).
bool rule_needs_nccl_version(const std::string& rule);
Attribution attribute(const std::string& rule, const std::string& title, const std::string& words,
                      const LibraryInUse& nccl, const std::vector<std::string>& facts = {});

// Words.
std::string measured_range_text(const Entry& e);  // "vulnerable 2.16.2-2.17.1 (3 releases); fixed from 2.18.1 ..."
std::string claimed_range_text(const Entry& e);
std::string list_text();
std::string show_text(const Entry& e);
nlohmann::json to_json(const Entry& e);

}  // namespace hangbench::catalog
