// The evidence of a hang while it is alive: the diagnose library's snapshot of
// every process of the job (stacks, Python frames, Flight Recorder, catalog
// attribution), written as text, JSON and Markdown under the evidence folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "hangbench/atomic_write.hpp"
#include "hangbench/clock.hpp"
#include "hangbench/diagnose.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/render.hpp"
#include "hangbench/slurm_diagnose.hpp"
#include "hangbench/watch.hpp"

namespace hangbench::watch {

namespace {

// The first finding that names a hang, else the first of any severity.
const diagnose::Finding* main_finding(const std::vector<diagnose::Finding>& findings) {
  for (const auto& f : findings)
    if (f.severity == diagnose::Severity::Hang) return &f;
  return findings.empty() ? nullptr : &findings.front();
}

void name_shape(HangEvidence& e, const std::vector<diagnose::Finding>& findings) {
  if (const auto* f = main_finding(findings)) {
    e.shape = f->rule;
    e.catalog_id = f->catalog;
  }
}

class DiagnoseCapture : public Capture {
 public:
  explicit DiagnoseCapture(CaptureOptions o) : o_(std::move(o)) {}

  HangEvidence capture(const std::vector<int>& pids, const nlohmann::json& watch_facts) override {
    const double start = monotonic_seconds();
    HangEvidence e;
    std::error_code ec;
    std::filesystem::create_directories(o_.dir, ec);
    if (ec) {
      e.error = "cannot make the evidence folder " + o_.dir + ": " + ec.message();
      e.seconds = monotonic_seconds() - start;
      return e;
    }
    // Twice at most: a node's read can fail while a step is still starting.
    for (int attempt = 0; attempt < 2; ++attempt) {
      e.error.clear();
      try {
        if (o_.slurm_job.empty())
          capture_local(e, pids, watch_facts);
        else
          capture_slurm(e, watch_facts);
        break;
      } catch (const std::exception& ex) {
        e.error = ex.what();
      }
      if (attempt == 0) ::usleep(500 * 1000);
    }
    if (!e.error.empty()) keep_the_failure(e, watch_facts);
    e.seconds = monotonic_seconds() - start;
    return e;
  }

 private:
  diagnose::DebuggerOptions debugger() const {
    diagnose::DebuggerOptions d;
    d.timeout_s = o_.stack_timeout_s;
    return d;
  }

  // Nothing lost: why the evidence is missing lands where the evidence would have.
  void keep_the_failure(HangEvidence& e, const nlohmann::json& watch_facts) {
    try {
      write(e, "capture-error.json", nlohmann::json{{"error", e.error}, {"watch", watch_facts}}.dump(2) + "\n");
    } catch (const std::exception&) {
    }
  }

  void write(HangEvidence& e, const std::string& name, const std::string& text) {
    write_file_atomically((std::filesystem::path(o_.dir) / name).string(), text);
    e.files.push_back(name);
  }

  void capture_local(HangEvidence& e, const std::vector<int>& pids, const nlohmann::json& watch_facts) {
    diagnose::SnapshotOptions opts;
    opts.stacks = o_.stacks;
    opts.debugger = debugger();
    const diagnose::Snapshot snapshot = diagnose::take_snapshot(pids, opts);
    const auto findings = diagnose::find_hang_shapes(snapshot);
    // The shape the headline tells, so that the event and the report name one hang.
    if (const auto* f = diagnose::headline_finding(snapshot, findings)) {
      e.shape = f->rule;
      e.catalog_id = f->catalog;
    } else {
      name_shape(e, findings);
    }
    for (const auto& line : diagnose::headline_lines(snapshot, findings)) {
      if (e.headline.empty()) e.headline = line;
    }
    std::set<int> ranks;
    for (const auto& p : snapshot.processes)
      if (p.target && p.rank >= 0) ranks.insert(p.rank);
    e.ranks.assign(ranks.begin(), ranks.end());
    e.pids = snapshot.target_pids;
    nlohmann::json doc = diagnose::diagnosis_json(snapshot, findings);
    doc["watch"] = watch_facts;
    doc["provenance"] = nlohmann::json::parse(
        provenance_json(collect_host_provenance(diagnose::nccl_libraries_mapped(snapshot))).dump());
    write(e, "diagnosis.txt", diagnose::render_text(snapshot, findings));
    write(e, "diagnosis.json", doc.dump(2) + "\n");
    write(e, "diagnosis.md", diagnose::render_markdown(snapshot, findings));
  }

  void capture_slurm(HangEvidence& e, const nlohmann::json& watch_facts) {
    diagnose::slurm::JobRequest r;
    r.job_id = o_.slurm_job;
    r.step = o_.slurm_step;
    r.stacks = o_.stacks;
    r.debugger = debugger();
    r.self_exe = o_.self_exe;
    const auto d = diagnose::slurm::diagnose_job(r);
    if (d.exit_code != 0) throw std::runtime_error(d.error);
    std::vector<diagnose::Finding> findings = d.cross_rank;
    std::set<int> ranks;
    for (const auto& node : d.nodes) {
      findings.insert(findings.end(), node.findings.begin(), node.findings.end());
      for (const auto& p : node.processes)
        if (p.rank >= 0) ranks.insert(p.rank);
    }
    // The hang that explains the others, as the local capture and diagnose's headline choose it.
    if (const auto* f = diagnose::headline_finding(findings)) {
      e.shape = f->rule;
      e.catalog_id = f->catalog;
      e.headline = f->title;
    } else {
      name_shape(e, findings);
      if (const auto* any = main_finding(findings)) e.headline = any->title;
    }
    e.ranks.assign(ranks.begin(), ranks.end());
    nlohmann::json doc = diagnose::slurm::job_json(d);
    doc["watch"] = watch_facts;
    write(e, "diagnosis.txt", diagnose::slurm::render_job_text(d));
    write(e, "diagnosis.json", doc.dump(2) + "\n");
  }

  CaptureOptions o_;
};

}  // namespace

std::unique_ptr<Capture> make_diagnose_capture(const CaptureOptions& options) {
  return std::make_unique<DiagnoseCapture>(options);
}

}  // namespace hangbench::watch
