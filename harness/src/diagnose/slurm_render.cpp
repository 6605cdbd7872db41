// The merged report of a Slurm job: one line per rank (host, pid, where it
// waits), the cross-rank findings, then each node's own findings.
#include <fmt/format.h>

#include <algorithm>

#include "hangbench/headline.hpp"
#include "hangbench/plumbing.hpp"
#include "hangbench/python_terms.hpp"
#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::diagnose::slurm {
namespace {

struct RankRow {
  int rank = -1;
  std::string host, step, comm, waits;
  int pid = 0;
  char state = '?';
  std::string python;    // the waiting thread's Python frame and the native calls under it (--stacks)
  std::string plumbing;  // the launcher role ("srun", "hangbench's harness"), "" for the job's processes
};

// Where a process's Python stands: the thread a finding names first, else the main thread.
std::string python_where(const NodeDiagnosis& n, const diagnose::ProcessSnapshot* p) {
  if (!p) return "";
  std::vector<int> tids;
  for (const auto& f : n.findings)
    if (!f.pids.empty() && f.pids.front() == p->info.pid) tids.insert(tids.end(), f.tids.begin(), f.tids.end());
  tids.push_back(p->info.pid);
  for (int tid : tids)
    for (const auto& t : p->stacks.threads)
      if (t.tid == tid)
        if (auto where = diagnose::thread_in_python_terms(t); !where.empty()) return where;
  return "";
}

// The main thread's wait: the syscall it sleeps in, else its wait channel.
std::string where_it_waits(const diagnose::ProcessSnapshot* p) {
  if (!p) return "(not read)";
  for (const auto& t : p->threads) {
    if (t.tid != p->info.pid) continue;
    if (!t.syscall_name.empty()) return t.syscall_name + (t.wchan.empty() ? "" : " (" + t.wchan + ")");
    return t.wchan.empty() ? std::string("running") : t.wchan;
  }
  return "?";
}

std::vector<RankRow> rank_rows(const JobDiagnosis& d) {
  std::vector<RankRow> rows;
  for (const auto& n : d.nodes) {
    for (const auto& p : n.processes) {
      const auto* snap = n.snapshot.find(p.pid);
      rows.push_back({p.rank, n.host, p.step, p.comm, where_it_waits(snap), p.pid, snap ? snap->info.state : '?',
                      python_where(n, snap), snap ? diagnose::plumbing_role(*snap) : ""});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) {
    return std::tie(a.rank, a.host, a.pid) < std::tie(b.rank, b.host, b.pid);
  });
  return rows;
}

}  // namespace

std::string render_job_text(const JobDiagnosis& d) {
  std::string out =
      fmt::format("Slurm job {}{}: {} node(s)\n\n", d.job_id, d.step.empty() ? "" : " step " + d.step, d.nodes.size());
  // The cross-rank finding first: it is what a person paged at night reads.
  out += "Across ranks:\n";
  if (d.cross_rank.empty()) out += "  no rank is in a known hang shape\n";
  for (const auto& f : d.cross_rank) out += "  - " + f.summary + "\n";
  // Who waits for whom, one sentence per cycle a node could see.
  for (const auto& n : d.nodes)
    for (const auto& f : n.findings)
      if (f.rule == "wait-for") out += fmt::format("  - on {}: {}\n", n.host, f.summary);
  auto rows = rank_rows(d);
  out += fmt::format("\n{:>5}  {:<20} {:>8}  {:<6} {:<16} {:<5} {}\n", "rank", "host", "pid", "step", "command",
                     "state", "waits in");
  std::vector<std::string> plumbing;
  for (const auto& r : rows) {
    if (!r.plumbing.empty()) {
      plumbing.push_back(fmt::format("{} pid {} ({}): {}, waits in {}", r.host, r.pid, r.comm, r.plumbing, r.waits));
      continue;
    }
    out += fmt::format("{:>5}  {:<20} {:>8}  {:<6} {:<16} {:<5} {}\n", r.rank >= 0 ? std::to_string(r.rank) : "-",
                       r.host, r.pid, r.step.empty() ? "batch" : r.step, r.comm, std::string(1, r.state), r.waits);
    if (!r.python.empty()) out += fmt::format("{:>7}python: {}\n", "", r.python);
  }
  for (const auto& n : d.nodes) {
    out += fmt::format("\nNode {}:\n", n.host);
    if (!n.error.empty()) {
      out += "  not read: " + n.error + "\n";
      continue;
    }
    auto headline = diagnose::headline_lines(n.snapshot, n.findings);
    if (headline.empty()) out += "  " + diagnose::summary_paragraph(n.snapshot, n.findings) + "\n";
    for (const auto& line : headline) out += "  " + line + "\n";
    for (const auto& s : diagnose::holder_sentences(n.snapshot)) out += "  - " + s + "\n";
    for (const auto& f : n.findings)
      if (f.severity == Severity::Plumbing) plumbing.push_back(n.host + ": " + f.title + ": " + f.summary);
  }
  if (!plumbing.empty()) {
    out += "\nLauncher plumbing (how the launcher works, not the job's hang):\n";
    for (const auto& line : plumbing) out += "  - " + line + "\n";
  }
  return out;
}

nlohmann::json job_json(const JobDiagnosis& d) {
  nlohmann::json j;
  j["schema"] = "hangbench.slurm-diagnosis/1";
  j["job_id"] = d.job_id;
  j["step"] = d.step;
  j["ranks"] = nlohmann::json::array();
  for (const auto& r : rank_rows(d)) {
    j["ranks"].push_back({{"rank", r.rank},
                          {"host", r.host},
                          {"pid", r.pid},
                          {"step", r.step},
                          {"comm", r.comm},
                          {"state", std::string(1, r.state)},
                          {"waits", r.waits},
                          {"python", r.python},
                          {"plumbing", r.plumbing}});
  }
  j["cross_rank"] = nlohmann::json::array();
  for (const auto& f : d.cross_rank) {
    j["cross_rank"].push_back({{"rule", f.rule},
                               {"title", f.title},
                               {"severity", to_string(f.severity)},
                               {"summary", f.summary},
                               {"facts", f.facts},
                               {"pids", f.pids}});
  }
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : d.nodes) j["nodes"].push_back(node_json(n));
  return j;
}

}  // namespace hangbench::diagnose::slurm
