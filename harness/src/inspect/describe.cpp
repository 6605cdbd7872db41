// Processes in words: who they are and where they came from.
#include <fmt/format.h>

#include <ctime>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

std::string clock_time(double unix_seconds) {
  if (unix_seconds <= 0) return "an unknown time";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

namespace {

bool is_descendant(const Snapshot& s, int pid, int ancestor) {
  // Walks the parents the snapshot recorded: no /proc read per question (a holder named
  // relative to each of 128 siblings read their ancestry 16,000 times: 3 s in the benchmark).
  for (int hop = 0; hop < 64 && pid > 1; ++hop) {
    const int parent = s.parent_of(pid);
    if (parent == ancestor) return true;
    if (parent <= 1) return false;
    pid = parent;
  }
  return false;
}

}  // namespace

std::string python_thread_name(const ProcessSnapshot& p, int tid) {
  for (const auto& t : p.python.threads)
    if (t.tid == tid && tid != 0) return t.name;
  return "";
}

std::string thread_title(const ProcessSnapshot& p, int tid, const std::string& os_name) {
  std::string python = python_thread_name(p, tid);
  if (python.empty() || python == os_name || (os_name.size() >= 15 && python.rfind(os_name, 0) == 0))
    return fmt::format("\"{}\"", os_name);
  return fmt::format("\"{}\" (Python \"{}\")", os_name, python);
}

std::string describe_process(const Snapshot& s, int pid, int relative_to) {
  const ProcessSnapshot* p = s.find(pid);
  if (!p) return fmt::format("pid {}", pid);
  std::string text = fmt::format("pid {} ({})", pid, p->info.comm);
  const ProcessSnapshot* other = relative_to > 0 ? s.find(relative_to) : nullptr;
  std::string forked = clock_time(p->info.start_unix);
  if (other && p->info.ppid == relative_to) {
    text += fmt::format(", a child that pid {} forked at {}", relative_to, forked);
  } else if (other && is_descendant(s, pid, relative_to)) {
    text += fmt::format(", a descendant of pid {} (parent pid {}), started at {}", relative_to, p->info.ppid, forked);
  } else {
    text += fmt::format(", child of pid {}, started at {}", p->info.ppid, forked);
  }
  if (other && other->info.start_unix > 0 && p->info.start_unix > 0) {
    double delta = p->info.start_unix - other->info.start_unix;
    text += fmt::format(" ({:.1f} s {} pid {} started)", delta < 0 ? -delta : delta, delta < 0 ? "before" : "after",
                        relative_to);
  }
  return text;
}

}  // namespace hangbench::diagnose
