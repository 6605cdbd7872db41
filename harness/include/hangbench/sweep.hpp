// `hangbench sweep`: validate's fixed design over many NCCL libraries at once (every
// release NVIDIA published, say) against the pinned references, one wave of trials,
// and one release table: release, CUDA build, wheel, static reading, teardown hangs
// with the exact interval, verdict, p against each reference. The table's first
// line is a sentence computed from it: which releases are affected, from which one
// it is fixed, which are not affected, which could not be judged and why.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hangbench/validate.hpp"

namespace hangbench::sweep {

inline constexpr const char* kSchema = "hangbench.sweep/1";
// Seconds a trial may live after the teardown began, unless --teardown-timeout says.
inline constexpr double kDefaultTeardownTimeoutS = 8;

// What is known of a library before any trial: from its file, and from the NCCL
// cache entry it belongs to when it came from a vendor wheel.
struct LibraryFacts {
  std::string path;
  std::string release;          // wheel version ("2.25.1.post1") or NCCL version; "" unknown
  std::string package;          // "nvidia-nccl-cu12", "" when not from a wheel
  std::string wheel;            // wheel file name
  std::string cuda_build;       // "12.1" from the library's version string
  bool slimmed = false;         // payloads of other GPU architectures zeroed for transport
  std::string original_sha256;  // the library as shipped (before slimming)
};

struct Row {
  LibraryFacts facts;
  std::string problem;  // a bad entry: not run ("no such file", "not NCCL: ...")
  nccl::InspectResult inspected;
  validate::StaticReading reading;
  validate::ArmTally arm;
  validate::Decision decision;
  bool judged() const { return problem.empty(); }
};

struct Request {
  validate::Request design;  // references, workload, trials, alpha, deadlines, out folder
  std::vector<std::string> libraries;
  int concurrency = 0;  // trials at once; 0 = the machine's cores
  std::string history;  // "" = none; else a SQLite file of each release's verdicts
  std::string hang;     // "" = the teardown check; else a catalog entry id (apply_hang() filled `design`)
  // `--hang ID...`: each entry's reproducer in turn over the same libraries; the table's
  // rows are the first entry's, and every entry gets a column (Result::hangs).
  std::vector<std::string> hangs;
  std::vector<std::string> argv;
};

// One column of the release x known-hang table: an entry's verdict on each row's library.
struct HangCell {
  std::string verdict;  // verdict_text() of the row in that entry's run
  std::string p_vs_fixed, p_vs_vulnerable;
  int hangs = 0, counted = 0;  // trials that hung after the entry's phase, of those that reached it
  std::string bytes;           // the entry's check of the library's bytes ("has the fix" ...), "" where it has none
  std::string source;          // the run that holds its trials ("run ID", or "store PATH run ID" when reused)
};
struct HangColumn {
  std::string id;
  bool references_separate = false;
  bool references_reached_phase = true;  // false: a reference had no trial that got far enough to hang
  std::string not_judged_why;            // when the references do not separate: why no cell is judged
  std::vector<HangCell> cells;           // in the order of Result::rows
};

struct HistoryChange {
  std::string release;
  std::string before, after;  // verdicts; before "" = a release never seen
};

struct Result {
  std::vector<Row> rows;  // in release order
  validate::ArmTally vulnerable, fixed;
  bool references_separate = false;
  stats::FisherResult references;
  int trials = 0;
  int reference_trials = 0;  // per reference arm run here
  double alpha = 0;
  double timeout_s = 0, teardown_timeout_s = 0;
  std::string teardown_phase;
  std::string workload_command;
  double seconds = 0;
  std::string run_id, run_dir;
  std::vector<std::string> argv;
  Provenance provenance;
  std::string hang;                    // `--hang ID`: the catalog entry whose reproducer ran; "" = the teardown check
  std::vector<HangColumn> hangs;       // with --hang: one column per entry, the first being `hang`
  std::string sentence;                // computed from the rows
  std::vector<HistoryChange> changes;  // against the history: verdict changes and new vulnerable releases
};

// Reads a list file: one library path per line; '#' starts a comment. Relative
// paths are relative to the file. Throws ConfigError naming the file and line.
std::vector<std::string> read_list(const std::string& path);

LibraryFacts library_facts(const std::string& path, const nccl::InspectResult* inspected);

Result run(const Request& request, TrialExecutor* executor = nullptr, std::ostream* log = nullptr);

// `sweep --hang ID`: the entry's reproducer (workload, arguments, phase) and its
// references into request.design; a "wheel:2.16.5" reference is the swept library of
// that release. Throws ConfigError for an unknown id, an entry without a reproducer
// to sweep, or a wheel reference that is not among the libraries.
void apply_hang(Request& request, const std::string& id);
// `--hang all` as every catalog entry with a reproducer a sweep can run (catalog order),
// the others kept as given; each id once.
std::vector<std::string> expand_hang_ids(const std::vector<std::string>& ids);

// "NCCL 2.16.2 to 2.17.1 hang in ncclCommAbort (vulnerable); fixed from 2.18.1 on; ..."
// `what` says what the vulnerable ones do ("in ncclCommAbort"; "(known hang ID)" for a
// catalog entry without the socket check).
std::string summary_sentence(const std::vector<Row>& rows, const std::string& what = "in ncclCommAbort");
// Compares tonight's rows with the history and appends them. Throws StoreError.
std::vector<HistoryChange> record_in_history(const std::string& history_path, const Result& result);
// 0 when every row is judged and nothing regressed; 1 a verdict changed or a new
// release is vulnerable; 3 the references did not separate.
int exit_code_of(const Result& result);

nlohmann::json to_json(const Result& result);
std::string to_markdown(const Result& result);
// `html_dir`: the folder the page is written to; the links to the run are made
// relative to it ("" = the run folder as the result names it).
std::string to_html(const Result& result, const std::string& html_dir = "");

// ---- The release x known-hang table (sweep --hang A --hang B, --hang all): its computed
// first lines, its cells with repeated reasons folded into footnotes, its legend; the
// same in Markdown, HTML and JSON (hang_table.cpp).
// "vulnerable", "fixed", "not affected", "not vulnerable", "inconclusive", "not run".
// The build a row is of: "cu12" for NVIDIA's nvidia-nccl-cu12 wheel, "" for a library of no wheel.
std::string build_of(const Row& row);
std::string verdict_word(const std::string& verdict_text);
// What follows "inconclusive: " or "not run: ", "" otherwise.
std::string verdict_reason(const std::string& verdict_text);

// One line per entry: "nccl-x: hangs in 2.23.4 to 2.25.1 (3 releases); first fixed 2.26.2; ...".
std::vector<std::string> hang_summary(const Result& r);

struct FoldedTable {
  // cells[row][column]: the verdict word, its p values, and "[n]" for a folded reason.
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> footnotes;  // "[1] the references did not separate", in order
};
FoldedTable fold_hang_table(const Result& r);

// The legend's lines: what each verdict word means.
const std::vector<std::string>& hang_legend();

// "nccl-socket-close-alias, nccl-launch-blocking-proxy".
std::string hang_ids(const Result& r);

}  // namespace hangbench::sweep
