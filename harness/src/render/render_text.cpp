// Human-readable renderings: the terminal text and the paste-into-an-issue Markdown.
#include <fmt/format.h>

#include <algorithm>

#include "hangbench/headline.hpp"
#include "hangbench/nccl_in_use.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/plumbing.hpp"
#include "hangbench/python_terms.hpp"
#include "hangbench/render.hpp"
#include "hangbench/thread_facts.hpp"

namespace hangbench::diagnose {

namespace {

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

namespace {

bool concerns_targets(const Snapshot& s, std::uint64_t inode) {
  for (const auto& c : s.connections)
    if (c.end_a.inode == inode || (c.end_b && c.end_b->inode == inode)) return true;
  for (const auto& u : s.pipes)
    if (u.inode == inode) return true;
  return false;
}

std::string collective_text(const nlohmann::json& e) {
  if (!e.is_object()) return "none";
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  return fmt::format("collective #{} {} in {} out {} ({})", text(e.value("collective_seq_id", nlohmann::json())),
                     text(e.value("op", nlohmann::json())), text(e.value("input_sizes", nlohmann::json())),
                     text(e.value("output_sizes", nlohmann::json())), text(e.value("state", nlohmann::json())));
}

std::string flight_recorder_text(const FlightRecorderDump& d) {
  std::string out;
  if (!d.file.empty() && d.summary.is_object())
    out = fmt::format("{}{}, {} entries; last enqueued {}; last started {}; last completed {}", d.file,
                      d.fresh ? " (dumped on request)" : "", d.summary.value("entries", 0),
                      collective_text(d.summary["last_enqueued"]), collective_text(d.summary["last_started"]),
                      collective_text(d.summary["last_completed"]));
  if (!d.skipped_reason.empty()) out += (out.empty() ? "" : "; ") + d.skipped_reason;
  return out;
}

std::string frame_text(const StackFrame& f) {
  std::string where =
      f.file.empty() ? (f.module.empty() ? "" : " (" + f.module + ")") : fmt::format(" ({}:{})", f.file, f.line);
  return f.function + where + (f.python ? "  [python]" : f.inlined ? "  [inlined]" : "");
}

// A thread's frames, innermost first: native with Python merged in, or the
// debugger's function names, or the Python frames alone when no native stack was read.
void render_frames(const ProcessSnapshot& p, int tid, const std::string& indent, std::string& out) {
  for (const auto& t : p.stacks.threads) {
    if (t.tid != tid) continue;
    if (t.frames.empty()) {
      if (!t.functions.empty()) out += indent + "  stack: " + join(t.functions, " <- ") + "\n";
      return;
    }
    for (const auto& f : t.frames) out += indent + "    " + frame_text(f) + "\n";
    return;
  }
  for (const auto& t : p.python.threads)
    if (t.tid == tid)
      for (const auto& f : t.frames)
        out += fmt::format("{}    {} ({}:{})  [python]\n", indent, f.function, f.file, f.line);
}

void render_processes(const Snapshot& s, std::string& out, bool markdown) {
  for (const auto& p : s.processes) {
    out += fmt::format("{}pid {} ({}) {} ppid {} pgid {} sid {}, started {}{}\n", markdown ? "- **" : "", p.info.pid,
                       p.info.comm, proc::state_name(p.info.state), p.info.ppid, p.info.pgid, p.info.sid,
                       clock_time(p.info.start_unix),
                       markdown ? "**" : (p.target ? "" : "  [holder outside the targets]"));
    std::string indent = markdown ? "  - " : "    ";
    if (!p.info.cmdline.empty())
      out += indent + "cmd: " + (markdown ? "`" : "") + join(p.info.cmdline, " ") + (markdown ? "`" : "") + "\n";
    for (const auto& lib : p.libraries) out += indent + "loaded: " + lib + "\n";
    for (const auto& t : p.threads) {
      // "running" once, not "running in running": a thread on a CPU waits in nothing.
      const std::string in = what_it_waits_in(t);
      out += in == "running" || in == "state R"
                 ? fmt::format("{}thread {} {} running", indent, t.tid, thread_title(p, t.tid, t.name))
                 : fmt::format("{}thread {} {} {} in {}", indent, t.tid, thread_title(p, t.tid, t.name),
                               proc::state_name(t.state), in);
      if (!t.polled_fds.empty()) {
        std::vector<std::string> fds;
        for (int fd : t.polled_fds) fds.push_back(std::to_string(fd));
        out += " polling fds " + join(fds, ",");
      }
      if (p.python.gil_holder_tid == t.tid && t.tid != 0) out += "  [holds the GIL]";
      out += "\n";
      render_frames(p, t.tid, indent, out);
    }
    for (const auto& d : p.descriptors) {
      bool shown_kind = d.target.kind == proc::DescriptorKind::Socket || d.target.kind == proc::DescriptorKind::Pipe;
      // A holder found elsewhere shows only the descriptors that made it a holder.
      if (shown_kind && (p.target || concerns_targets(s, d.target.inode)))
        out += fmt::format("{}fd {} -> {}\n", indent, d.fd, d.link);
    }
    if (p.stacks.attempted && !p.stacks.skipped_reason.empty())
      out += indent + "native stacks skipped: " + p.stacks.skipped_reason + "\n";
    if (p.stacks.attempted && p.stacks.skipped_reason.empty())
      out += fmt::format("{}native stacks: {} in {:.2f} s\n", indent, p.stacks.debugger, p.stacks.seconds);
    if (p.python.attempted && !p.python.skipped_reason.empty())
      out += indent + "python frames: " + p.python.skipped_reason + "\n";
    else if (p.python.attempted)
      out += fmt::format("{}python {}: {} thread(s), {}\n", indent, p.python.version, p.python.threads.size(),
                         p.python.gil_holder_tid ? fmt::format("thread {} holds the GIL", p.python.gil_holder_tid)
                                                 : std::string("nobody holds the GIL"));
    if (p.flight_recorder.attempted)
      out += indent + "flight recorder: " + flight_recorder_text(p.flight_recorder) + "\n";
  }
}

void render_connections(const Snapshot& s, std::string& out, const std::string& indent) {
  auto holders = [](const std::vector<Holder>& hs) {
    std::vector<std::string> parts;
    for (const auto& h : hs) parts.push_back(fmt::format("pid {} fd {}", h.pid, h.fd));
    return parts.empty() ? std::string("nobody we can read") : join(parts, ", ");
  };
  for (const auto& c : s.connections) {
    out += fmt::format("{}{} {} {} -> {} socket:[{}] held by {}", indent, c.end_a.protocol, c.end_a.state,
                       c.end_a.local, c.end_a.remote, c.end_a.inode, holders(c.holders_a));
    if (c.end_b)
      out += fmt::format("; peer socket:[{}] {} held by {}", c.end_b->inode, c.end_b->local, holders(c.holders_b));
    out += "\n";
  }
  for (const auto& u : s.pipes)
    out += fmt::format("{}pipe:[{}] readers {}; writers {}\n", indent, u.inode, holders(u.readers), holders(u.writers));
}

}  // namespace

namespace {

// Launcher plumbing: each launcher process by its role, its own waits, and the
// connections among launchers only. Apart, so that they are never read as the job's hang.
std::vector<std::string> plumbing_lines(const Snapshot& s, const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  std::vector<std::string> roles;
  for (const auto& p : s.processes)
    if (p.target && is_plumbing(p))
      roles.push_back(fmt::format("pid {} ({}): {}", p.info.pid, p.info.comm, plumbing_role(p)));
  if (!roles.empty()) out.push_back("launcher processes: " + join(roles, "; "));
  for (const auto& f : findings)
    if (f.severity == Severity::Plumbing) out.push_back(f.title + ": " + f.summary);
  for (const auto& sentence : launcher_holder_sentences(s)) out.push_back(sentence);
  return out;
}

// Per process with NCCL: the library in use, those merely loaded, the shims.
std::vector<std::string> nccl_library_lines(const Snapshot& s, const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& p : s.processes) {
    if (!p.target || is_plumbing(p)) continue;
    bool has_nccl = std::any_of(p.libraries.begin(), p.libraries.end(), is_nccl_library);
    if (!has_nccl) continue;
    std::vector<int> tids;
    for (const auto& f : findings)
      if (!f.pids.empty() && f.pids.front() == p.info.pid) tids.insert(tids.end(), f.tids.begin(), f.tids.end());
    // A forked worker maps its parent's libraries but runs none of NCCL: named once, with its parent.
    if (const auto* parent = s.find(p.info.ppid); parent && parent->target && parent->libraries == p.libraries)
      continue;
    auto libs = nccl_libraries_of(p, tids);
    out.push_back(fmt::format("pid {} ({}): {}", p.info.pid, p.info.comm, join(libs.sentences, "; ")));
  }
  return out;
}

}  // namespace

namespace {

// One line per rank: its host, where it waits (Python frame when read), who holds it.
std::vector<std::string> rank_lines(const Snapshot& s, const std::vector<Finding>& findings) {
  std::vector<const ProcessSnapshot*> ranks;
  for (const auto& p : s.processes)
    if (p.target && p.rank >= 0 && !is_plumbing(p)) ranks.push_back(&p);
  std::sort(ranks.begin(), ranks.end(), [](auto* a, auto* b) { return a->rank < b->rank; });
  std::vector<std::string> out;
  for (const auto* p : ranks) {
    const Finding* mine = nullptr;
    for (const auto& f : findings)
      if (f.severity == Severity::Hang && !f.pids.empty() && f.pids.front() == p->info.pid) {
        mine = &f;
        break;
      }
    std::vector<int> tids = mine ? mine->tids : std::vector<int>{};
    tids.push_back(p->info.pid);
    std::string where;
    for (int tid : tids) {
      for (const auto& t : p->stacks.threads)
        if (t.tid == tid && where.empty()) where = thread_in_python_terms(t);
      for (const auto& t : p->threads)
        if (t.tid == tid && where.empty() && tid == tids.back()) where = "main thread in " + what_it_waits_in(t);
    }
    std::string held;
    if (mine && mine->pids.size() > 1) {
      std::vector<std::string> holders;
      for (std::size_t i = 1; i < mine->pids.size(); ++i)
        holders.push_back(describe_process(s, mine->pids[i], p->info.pid));
      held = "; held by " + join(holders, "; ");
    }
    out.push_back(fmt::format("rank {} on {}: pid {} ({}), {}{}{}", p->rank, s.host, p->info.pid, p->info.comm,
                              where.empty() ? "not read" : where, mine ? " [" + mine->title + "]" : "", held));
  }
  return out;
}

}  // namespace

std::string render_text(const Snapshot& s, const std::vector<Finding>& findings) {
  std::string out = fmt::format("hangbench diagnose: {} target process(es) on {} at {}\n\n", s.target_pids.size(),
                                s.host, clock_time(s.captured_at));
  auto headline = headline_lines(s, findings);
  if (headline.empty()) out += "SUMMARY\n  " + summary_paragraph(s, findings) + "\n";
  for (const auto& line : headline) out += line + "\n";
  if (auto ranks = rank_lines(s, findings); !ranks.empty()) {
    out += "\nRANKS\n";
    for (const auto& line : ranks) out += "  " + line + "\n";
  }
  out += "\nFINDINGS\n";
  bool any = false;
  for (const auto& f : findings) {
    if (f.severity == Severity::Plumbing) continue;
    any = true;
    out += fmt::format("  [{}] {} ({})\n    {}\n", to_string(f.severity), f.title, f.rule, f.summary);
    if (!f.catalog.empty()) {
      const std::string known = known_hang_sentence(s, f);
      out +=
          fmt::format("    known hang: {} (hangbench catalog show {})\n", known.empty() ? f.catalog : known, f.catalog);
      for (const auto& r : remedies_for(f.catalog))
        out += fmt::format("    remedy: {} ({} vs {} hung: {}, {})\n", r.action, r.a_hangs, r.b_hangs, r.comparison,
                           r.report);
    }
    for (const auto& fact : f.facts) out += "    - " + fact + "\n";
  }
  if (!any) out += "  none: no thread is part of a hang pattern\n";
  auto sentences = holder_sentences(s);
  if (!sentences.empty()) {
    out += "\nHOLDERS\n";
    for (const auto& sentence : sentences) out += "  " + sentence + "\n";
  }
  if (auto libs = nccl_library_lines(s, findings); !libs.empty()) {
    out += "\nNCCL LIBRARIES\n";
    for (const auto& line : libs) out += "  " + line + "\n";
  }
  if (auto plumbing = plumbing_lines(s, findings); !plumbing.empty()) {
    out += "\nLAUNCHER PLUMBING (how the launcher works, not the job's hang)\n";
    for (const auto& line : plumbing) out += "  " + line + "\n";
  }
  out += "\nPROCESSES\n";
  render_processes(s, out, false);
  out += "\nSOCKETS AND PIPES\n";
  render_connections(s, out, "  ");
  for (const auto& n : s.notes) out += "\nnote: " + n;
  if (!s.notes.empty()) out += "\n";
  return out;
}

std::string render_markdown(const Snapshot& s, const std::vector<Finding>& findings) {
  std::string out = fmt::format("### hangbench diagnose: pids {} on `{}`\n\n", fmt::join(s.target_pids, ", "), s.host);
  auto headline = headline_lines(s, findings);
  if (headline.empty())
    out += "**Summary.** " + summary_paragraph(s, findings) + "\n\n";
  else
    out += "```\n" + join(headline, "\n") + "\n```\n\n";
  out += "#### Findings\n\n";
  bool any = false;
  for (const auto& f : findings) {
    if (f.severity == Severity::Plumbing) continue;
    any = true;
    out += fmt::format("- **{}** (`{}`, {}): {}\n", f.title, f.rule, to_string(f.severity), f.summary);
    if (!f.catalog.empty())
      out += fmt::format("  - known hang `{}` (`hangbench catalog show {}`)\n", f.catalog, f.catalog);
    for (const auto& fact : f.facts) out += "  - " + fact + "\n";
  }
  if (!any) out += "None: no thread is part of a hang pattern.\n";
  auto sentences = holder_sentences(s);
  if (!sentences.empty()) {
    out += "\n#### Who holds each connection\n\n";
    for (const auto& sentence : sentences) out += "- " + sentence + "\n";
  }
  if (auto libs = nccl_library_lines(s, findings); !libs.empty()) {
    out += "\n#### NCCL libraries\n\n";
    for (const auto& line : libs) out += "- " + line + "\n";
  }
  if (auto plumbing = plumbing_lines(s, findings); !plumbing.empty()) {
    out += "\n#### Launcher plumbing (not the job's hang)\n\n";
    for (const auto& line : plumbing) out += "- " + line + "\n";
  }
  out += "\n#### Processes and threads\n\n";
  render_processes(s, out, true);
  out += "\n<details><summary>Sockets and pipes</summary>\n\n```\n";
  render_connections(s, out, "");
  out += "```\n</details>\n";
  for (const auto& p : s.processes)
    if (!p.stacks.raw.empty())
      out += fmt::format("\n<details><summary>Native stacks of pid {} ({})</summary>\n\n```\n{}```\n</details>\n",
                         p.info.pid, p.stacks.debugger, p.stacks.raw);
  if (!s.notes.empty()) {
    out += "\n";
    for (const auto& n : s.notes) out += "> note: " + n + "\n";
  }
  return out;
}

}  // namespace hangbench::diagnose
