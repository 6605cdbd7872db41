// Generic shapes: a stopped process, an unreaped zombie, and a reader blocked on
// a pipe whose write end another process (or the reader itself) still holds.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose::rules {

std::vector<Finding> stopped_process(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target || (p.info.state != 'T' && p.info.state != 't')) continue;
    Finding f;
    f.rule = "stopped";
    f.title = "stopped process";
    f.severity = Severity::Hang;
    f.pids = {p.info.pid};
    f.summary = p.info.state == 'T'
                    ? fmt::format(
                          "pid {} ({}) is stopped (SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU): it makes no progress "
                          "until it gets SIGCONT (kill -CONT {}).",
                          p.info.pid, p.info.comm, p.info.pid)
                    : fmt::format("pid {} ({}) is stopped by a tracer (a debugger or strace is attached).", p.info.pid,
                                  p.info.comm);
    f.facts.push_back(fmt::format("/proc/{}/stat state {}", p.info.pid, p.info.state));
    findings.push_back(std::move(f));
  }
  return findings;
}

std::vector<Finding> unreaped_zombie(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target || p.info.state != 'Z') continue;
    Finding f;
    f.rule = "zombie";
    f.title = "zombie not reaped";
    f.severity = Severity::Note;
    f.pids = {p.info.pid, p.info.ppid};
    const auto* parent = s.find(p.info.ppid);
    std::string parent_name = parent ? describe_process(s, p.info.ppid) : fmt::format("pid {}", p.info.ppid);
    f.summary = fmt::format(
        "pid {} ({}) has exited but {} has not reaped it (no wait()): the parent is busy or "
        "blocked elsewhere, or never waits for its children.",
        p.info.pid, p.info.comm, parent_name);
    f.facts.push_back(fmt::format("/proc/{}/stat state Z, parent {}", p.info.pid, p.info.ppid));
    findings.push_back(std::move(f));
  }
  return findings;
}

std::vector<Finding> pipe_reader_blocked(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    for (const auto& t : p.threads) {
      // The descriptor it reads: the first argument of read(), else any pipe read end when wchan says pipe_read.
      std::vector<const proc::Descriptor*> candidates;
      bool in_read = (t.syscall_name == "read" || t.syscall_name == "readv") && !t.syscall.args.empty();
      for (const auto& d : p.descriptors) {
        if (d.target.kind != proc::DescriptorKind::Pipe) continue;
        bool read_end = d.flags < 0 || (d.flags & O_ACCMODE) != O_WRONLY;
        if (in_read && static_cast<std::uint64_t>(d.fd) == t.syscall.args[0] && read_end)
          candidates.push_back(&d);
        else if (!in_read && t.wchan.find("pipe_read") != std::string::npos && read_end)
          candidates.push_back(&d);
      }
      for (const auto* d : candidates) {
        auto use =
            std::find_if(s.pipes.begin(), s.pipes.end(), [&](const PipeUse& u) { return u.inode == d->target.inode; });
        if (use == s.pipes.end()) continue;
        std::vector<Holder> own, others;
        for (const auto& w : use->writers) (w.pid == p.info.pid ? own : others).push_back(w);
        if (own.empty() && others.empty()) continue;
        Finding f;
        f.rule = "pipe-writer-held";
        f.title = "reader blocked on a pipe whose write end is held elsewhere";
        f.severity = Severity::Hang;
        f.pids = {p.info.pid};
        f.tids = {t.tid};
        for (const auto& h : others) f.pids.push_back(h.pid);
        f.facts.push_back(fmt::format("pid {} thread {} \"{}\" waits in {} on fd {} ({})", p.info.pid, t.tid, t.name,
                                      what_it_waits_in(t), d->fd, d->link));
        if (!others.empty()) f.facts.push_back("write end held by " + holders_in_words(s, others, p.info.pid));
        if (!own.empty())
          f.facts.push_back(fmt::format("pid {} itself holds a write end (fd {})", p.info.pid, own.front().fd));
        f.summary = fmt::format(
            "pid {} ({}) thread {} is blocked reading {} (fd {}); it sees EOF only when every write end is closed, "
            "and {}.",
            p.info.pid, p.info.comm, t.tid, d->link, d->fd,
            others.empty()
                ? fmt::format("pid {} holds a write end itself (fd {}), so it never will", p.info.pid, own.front().fd)
                : "the write end is still held by " + holders_in_words(s, others, p.info.pid) +
                      (own.empty() ? "" : fmt::format(" (and by pid {} itself, fd {})", p.info.pid, own.front().fd)));
        findings.push_back(std::move(f));
      }
    }
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
