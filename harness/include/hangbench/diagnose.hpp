// Known hang shapes, matched against a Snapshot by a small table of rules, and
// the renderings of a diagnosis (text, Markdown, JSON).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "hangbench/nccl_library.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// How much a finding weighs: a hang (no progress possible), a risk (will hang if ...),
// a note, or the plumbing of a launcher (how it works, never the job's hang).
enum class Severity { Hang, Risk, Note, Plumbing };
std::string to_string(Severity s);  // "hang", "risk", "note", "plumbing"
// The inverse, for findings read back from JSON; throws std::invalid_argument otherwise.
Severity severity_from_string(const std::string& text);

struct Finding {
  std::string rule;   // stable id: "nccl-descriptor-alias", "mpi-gil", "stopped", ...
  std::string title;  // short name of the shape
  Severity severity = Severity::Note;
  std::string summary;             // one paragraph in words
  std::vector<std::string> facts;  // the facts that triggered the rule
  std::vector<int> pids;           // the processes concerned: the one that waits first, then its holders
  std::vector<int> tids;           // the waiting threads of pids[0], the one to name first
  std::vector<int> ranks;          // the ranks concerned (a missing rank: the ones missing), when known
  std::string catalog;             // the known hang (catalog/<id>.toml) this shape is, "" when none
};

// One rule: reads the snapshot, returns zero or more findings.
struct Rule {
  std::string id;
  std::string description;
  std::function<std::vector<Finding>(const Snapshot&)> match;
};

const std::vector<Rule>& rule_table();
std::vector<Finding> find_hang_shapes(const Snapshot& s);

// Renderings of snapshot + findings.
std::string render_text(const Snapshot& s, const std::vector<Finding>& findings);
std::string render_markdown(const Snapshot& s, const std::vector<Finding>& findings);
nlohmann::json diagnosis_json(const Snapshot& s, const std::vector<Finding>& findings);
// The headline, at most five lines: the hang's name, who waits (rank, pid, thread,
// Python frame), who holds it, the NCCL library in use, which known hang of the
// catalog it is and where that library stands against its ranges, and what to do (each remedy
// with the measured result in results/ that backs it). Empty when nothing is hung.
std::vector<std::string> headline_lines(const Snapshot& s, const std::vector<Finding>& findings);
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

// `hangbench diagnose`: which processes to read, and the checks before reading.
struct DiagnoseRequest {
  std::vector<int> pids;  // as given
  int tree_root = 0;      // --tree PID: it and all its descendants
  bool stacks = false;
  DebuggerOptions debugger;
  std::string proc_root = "/proc";
};

struct Diagnosis {
  int exit_code = 0;  // 0 report produced, 2 bad pid / not inspectable
  std::string error;  // when exit_code != 0, in words
  Snapshot snapshot;
  std::vector<Finding> findings;
};

// The pids to read, or an error naming the first pid that does not exist or
// cannot be inspected.
struct ResolvedTargets {
  std::vector<int> pids;
  std::string error;
};
ResolvedTargets resolve_targets(const DiagnoseRequest& request);
Diagnosis diagnose(const DiagnoseRequest& request);

// Where a diagnosis's time went, printed on stderr stage by stage when enabled
// (`diagnose --timings`).
class StageTimer {
 public:
  explicit StageTimer(bool enabled);
  void mark(const std::string& stage);  // the time since the last mark, as this stage
  void print(const std::string& stage, double seconds) const;
  void total();

 private:
  bool enabled_;
  double last_;
  double first_;
};

// What `hangbench diagnose` writes of a diagnosis (diagnose_report.cpp): text (after
// text_header) or JSON with the host's provenance on `out`, and the Markdown and
// Graphviz files when named.
struct ReportOptions {
  bool json = false;
  std::string text_header;                  // e.g. that stored evidence was judged again
  std::vector<std::string> nccl_libraries;  // the live libraries the provenance hashes
  std::string markdown_path, dot_path;      // "" none
};
void write_report(std::ostream& out, const Snapshot& s, const std::vector<Finding>& findings,
                  const ReportOptions& options, StageTimer& timer);

}  // namespace hangbench::diagnose
