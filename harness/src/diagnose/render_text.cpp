// Human-readable renderings: the terminal text and the paste-into-an-issue Markdown.
#include <fmt/format.h>

#include <algorithm>

#include "diagnose/rule_helpers.hpp"
#include "hangbench/diagnose.hpp"

namespace hangbench::evidence {

using rules::join;

std::vector<std::string> holder_sentences(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& c : s.connections) {
    if (!c.end_b) continue;
    // The anchor is the earliest-started target holding an end: usually the process
    // that made the connection; everyone else holding it is named relative to it.
    int anchor = 0;
    double anchor_start = 0;
    for (const auto* hs : {&c.holders_a, &c.holders_b})
      for (const auto& h : *hs)
        if (const auto* p = s.find(h.pid); p && p->target && (anchor == 0 || p->info.start_unix < anchor_start)) {
          anchor = h.pid;
          anchor_start = p->info.start_unix;
        }
    std::vector<int> others;
    for (const auto* hs : {&c.holders_a, &c.holders_b})
      for (const auto& h : *hs)
        if (h.pid != anchor && std::find(others.begin(), others.end(), h.pid) == others.end()) others.push_back(h.pid);
    if (others.empty()) continue;  // an ordinary connection inside one process
    const ProcessSnapshot* anchor_process = s.find(anchor);
    std::vector<std::string> parts;
    for (int pid : others) {
      std::vector<std::string> fds;
      for (const auto& [hs, end] : {std::pair{&c.holders_a, &c.end_a}, std::pair{&c.holders_b, &*c.end_b}})
        for (const auto& h : *hs) {
          if (h.pid != pid) continue;
          std::string dup;
          if (anchor_process)
            if (const auto* d = rules::descriptor_for_inode(*anchor_process, end->inode))
              dup = fmt::format(", a duplicate of pid {}'s fd {}", anchor, d->fd);
          std::string where = end->local.empty() ? "socket:[" + std::to_string(end->inode) + "]" : end->local;
          fds.push_back(fmt::format("fd {} for the end {}{}", h.fd, where, dup));
        }
      parts.push_back(describe_process(s, pid, anchor) + ", through its " + join(fds, " and its "));
    }
    std::string proto = c.end_a.protocol == "unix" ? "unix socket pair" : "connection";
    std::string a = c.end_a.local.empty() ? "socket:[" + std::to_string(c.end_a.inode) + "]" : c.end_a.local;
    std::string b = c.end_b->local.empty() ? "socket:[" + std::to_string(c.end_b->inode) + "]" : c.end_b->local;
    std::string anchor_text;
    if (anchor_process) {
      std::vector<std::string> own;
      for (const auto* hs : {&c.holders_a, &c.holders_b})
        for (const auto& h : *hs)
          if (h.pid == anchor) own.push_back("fd " + std::to_string(h.fd));
      anchor_text = own.empty() ? fmt::format("; pid {} itself holds neither end", anchor)
                                : fmt::format("; pid {} ({}) itself holds {}", anchor, anchor_process->info.comm,
                                              join(own, " and "));
    }
    out.push_back(fmt::format("the {} {} {} <-> {} is held open by {}{}", c.end_a.state, proto, a, b,
                              join(parts, "; and by "), anchor_text));
  }
  return out;
}

std::string summary_paragraph(const Snapshot& s, const std::vector<Finding>& findings) {
  for (const auto& f : findings)
    if (f.severity == "hang") return f.summary;
  if (!findings.empty()) return findings.front().summary;
  auto sentences = holder_sentences(s);
  if (!sentences.empty()) return "No known hang shape matched; " + join(sentences, "; ") + ".";
  return "No known hang shape matched.";
}

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
      out += fmt::format("{}thread {} \"{}\" {} in {}", indent, t.tid, t.name, proc::state_name(t.state),
                         rules::what_it_waits_in(t));
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

std::string render_text(const Snapshot& s, const std::vector<Finding>& findings) {
  std::string out = fmt::format("hangbench diagnose: {} target process(es) on {} at {}\n\n", s.target_pids.size(),
                                s.host, clock_time(s.captured_at));
  out += "SUMMARY\n  " + summary_paragraph(s, findings) + "\n\n";
  out += "FINDINGS\n";
  if (findings.empty()) out += "  no known hang shape matched\n";
  for (const auto& f : findings) {
    out += fmt::format("  [{}] {} ({})\n    {}\n", f.severity, f.title, f.rule, f.summary);
    for (const auto& fact : f.facts) out += "    - " + fact + "\n";
  }
  auto sentences = holder_sentences(s);
  if (!sentences.empty()) {
    out += "\nHOLDERS\n";
    for (const auto& sentence : sentences) out += "  " + sentence + "\n";
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
  out += "**Summary.** " + summary_paragraph(s, findings) + "\n\n";
  out += "#### Findings\n\n";
  if (findings.empty()) out += "No known hang shape matched.\n";
  for (const auto& f : findings) {
    out += fmt::format("- **{}** (`{}`, {}): {}\n", f.title, f.rule, f.severity, f.summary);
    for (const auto& fact : f.facts) out += "  - " + fact + "\n";
  }
  auto sentences = holder_sentences(s);
  if (!sentences.empty()) {
    out += "\n#### Who holds each connection\n\n";
    for (const auto& sentence : sentences) out += "- " + sentence + "\n";
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

}  // namespace hangbench::evidence
