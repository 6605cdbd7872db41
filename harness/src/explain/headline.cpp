// The first five lines of a diagnosis: what hangs (and the known hang it is), who waits,
// who holds it, which NCCL runs, what to do. Everything else in the report is the detail behind them.
#include "hangbench/headline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "explain/rule_helpers.hpp"
#include "hangbench/catalog.hpp"

namespace hangbench::diagnose {

using rules::join;

namespace {

std::string shortened(const std::string& text, std::size_t most) {
  if (text.size() <= most) return text;
  auto cut = text.rfind(' ', most - 4);
  return text.substr(0, cut == std::string::npos ? most - 4 : cut) + " ...";
}

}  // namespace

std::string plain_function_names(const std::string& text) {
  // C++ template arguments and parameter lists, innermost first: a frame of libtorch's
  // dispatcher is hundreds of characters of them (seen in a headline on the H100).
  std::string out;
  out.reserve(text.size());
  int angle = 0, paren = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // "operator<" and "<frozen importlib>" are no template: only a '<' glued to a name opens one.
    if (c == '<' && i > 0 &&
        (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_' || text[i - 1] == ':' ||
         angle > 0)) {
      ++angle;
      continue;
    }
    if (c == '>' && angle > 0) {
      --angle;
      continue;
    }
    if (angle > 0) continue;
    if (c == '(' && i > 0 &&
        (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_' || paren > 0)) {
      // A Python frame's "(main.py:41)" stays: it follows a space or a backquote, not a name.
      ++paren;
      continue;
    }
    if (c == ')' && paren > 0) {
      --paren;
      continue;
    }
    if (paren > 0) continue;
    out += c;
  }
  return out;
}

namespace {

std::string who(const ProcessSnapshot& p) {
  return (p.rank >= 0 ? fmt::format("rank {}, ", p.rank) : "") + fmt::format("pid {} ({})", p.info.pid, p.info.comm);
}

const StackThread* stack_thread(const ProcessSnapshot& p, int tid) {
  for (const auto& t : p.stacks.threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

// The waiting thread to name: the first of the finding's threads that runs Python
// (what a person recognises), else its first thread, else the main thread.
int waiting_tid(const ProcessSnapshot& p, const Finding& f) {
  for (int tid : f.tids)
    if (const auto* t = stack_thread(p, tid); t && !rules::thread_in_python_terms(*t).empty()) return tid;
  return f.tids.empty() ? p.info.pid : f.tids.front();
}

std::string waits_line(const ProcessSnapshot& p, const Finding& f) {
  int tid = waiting_tid(p, f);
  std::string thread_name;
  std::string in;
  for (const auto& t : p.threads)
    if (t.tid == tid) {
      thread_name = t.name;
      in = rules::what_it_waits_in(t);
    }
  std::string where;
  if (const auto* t = stack_thread(p, tid)) {
    where = rules::thread_in_python_terms(*t);
    if (where.empty()) {
      where = rules::native_calls(*t, 4);
      // A native thread (c10d's abort thread, say) waits for the user: name the Python line
      // the main thread is on, the one a person looks for in their script.
      if (const auto* main = stack_thread(p, p.info.pid); main && tid != p.info.pid)
        if (std::string line = rules::innermost_python_frame(*main); !line.empty())
          where += "; the main thread is in Python at " + line;
    }
  }
  if (where.empty()) where = in.empty() ? "" : "in " + in;
  return fmt::format("WAITS    {}, thread {} {}{}", who(p), tid, thread_title(p, tid, thread_name),
                     where.empty() ? "" : ": " + plain_function_names(where));
}

std::string relation(const Snapshot& s, const ProcessSnapshot& holder, const ProcessSnapshot& subject) {
  const ProcessSnapshot* parent = s.find(holder.info.ppid);
  if (!parent) return fmt::format("child of pid {}", holder.info.ppid);
  std::string whose = parent->info.pid == subject.info.pid ? "the waiting process" : who(*parent);
  std::string when;
  if (parent->info.start_unix > 0 && holder.info.start_unix > 0)
    when = fmt::format(", forked {:.1f} s after it started", holder.info.start_unix - parent->info.start_unix);
  return "a child of " + whose + when;
}

std::string held_line(const Snapshot& s, const ProcessSnapshot& subject, const Finding& f) {
  std::vector<std::string> parts;
  std::vector<int> seen;
  for (std::size_t i = 1; i < f.pids.size(); ++i) {
    int pid = f.pids[i];
    if (pid == subject.info.pid || std::find(seen.begin(), seen.end(), pid) != seen.end()) continue;
    seen.push_back(pid);
    const auto* h = s.find(pid);
    if (!h) continue;
    if (parts.size() >= 2) continue;
    // Another rank of the job is named as a rank, with what its main thread waits in; a
    // forked worker or a helper by how it came to hold the resource.
    if (h->rank >= 0 && h->rank != subject.rank) {
      std::string in;
      for (const auto& t : h->threads)
        if (t.tid == pid) in = rules::what_it_waits_in(t);
      parts.push_back(who(*h) + (in.empty() ? "" : ", its main thread in " + in));
    } else {
      parts.push_back(fmt::format("pid {} ({}), {}", pid, h->info.comm, relation(s, *h, subject)));
    }
  }
  if (parts.empty()) return "";
  std::string more = seen.size() > parts.size() ? fmt::format("; and {} more", seen.size() - parts.size()) : "";
  return "HELD BY  " + join(parts, "; ") + more;
}

// The teardown hang's question (does ncclSocketClose call shutdown()?) only where the hang
// is that shape: under any other it is noise about a healthy library.
std::string nccl_line(const rules::NcclLibraries& libs, bool teardown_shape) {
  if (libs.in_use.empty()) {
    std::vector<std::string> all = libs.loaded_only;
    if (all.empty()) return "";
    return "NCCL     several loaded, which one waits needs --stacks: " + join(all, ", ");
  }
  std::string verdict = libs.facts.calls_shutdown == "yes"  ? "calls shutdown() (fixed)"
                        : libs.facts.calls_shutdown == "no" ? "does NOT call shutdown() (close-only, like 2.17.1)"
                                                            : "may or may not call shutdown()";
  std::string apart;
  if (!libs.loaded_only.empty() || !libs.shims.empty())
    apart = fmt::format(" [{} more loaded, {} shim(s): listed below]", libs.loaded_only.size(), libs.shims.size());
  return fmt::format("NCCL     {} {} ({}){}{}", libs.facts.version.empty() ? "of unknown version" : libs.facts.version,
                     libs.in_use, libs.how, teardown_shape ? "; its ncclSocketClose " + verdict : "", apart);
}

// The known hang this is (catalog/*.toml): its entry, the NCCL library in use and
// where that build stands against the measured and the claimed ranges; "" when the
// shape is no entry of the catalog (the finding's own words say what it is).
std::string known_hang(const Finding& f, const rules::NcclLibraries& libs) {
  if (f.catalog.empty()) return "";
  catalog::LibraryInUse nccl{libs.in_use, libs.facts.version, libs.facts.sha256};
  return catalog::attribute(f.rule, f.title, f.summary, nccl).sentence;
}

// What to do for a shape the catalog has no entry for: the next step the pattern implies.
std::string generic_step(const std::string& rule) {
  if (rule == "wait-cycle") return "break the ring: give one of these waits a timeout, or take them in one order";
  if (rule == "gil-convoy")
    return "release the GIL around the blocking call (ctypes.CDLL, Py_BEGIN_ALLOW_THREADS), or drive the wait "
           "from a native thread";
  if (rule == "missing-rank") return "read the missing rank's log and exit code; the others cannot finish without it";
  if (rule == "collective-mismatch") return "make every rank call the same collectives in the same order";
  if (rule == "p2p-unmatched")
    return "post the matching receive (or send) on the peer, in the same order on both sides, or batch them with "
           "batch_isend_irecv";
  if (rule == "blocked-by-stopped") return "resume the stopped process (kill -CONT) or end it";
  return "";
}

// At most about 200 characters: the remedies' actions and their measured tallies; the
// reports that back them are listed under FINDINGS.
std::string do_line(const std::string& key, const std::string& rule, const rules::NcclLibraries& libs) {
  auto remedies = remedies_for(key);
  // A library that already calls shutdown() has the fix: upgrading is no remedy.
  if ((key == "nccl-descriptor-alias" || key == "nccl-socket-close-alias") && libs.facts.calls_shutdown == "yes" &&
      !remedies.empty())
    remedies.erase(remedies.begin());
  constexpr std::size_t kMost = 200;
  std::string text;
  std::size_t shown = 0;
  for (const auto& r : remedies) {
    std::string part = fmt::format("{} ({} vs {} hung)", r.action, r.a_hangs, r.b_hangs);
    if (!text.empty() && text.size() + part.size() + 2 > kMost) break;
    text += (text.empty() ? "" : "; ") + part;
    ++shown;
  }
  if (shown < remedies.size()) text += fmt::format("; {} more under FINDINGS", remedies.size() - shown);
  if (text.empty()) text = generic_step(rule);
  return text.empty() ? "" : "DO       " + text;
}

}  // namespace

std::vector<std::string> headline_lines(const Snapshot& s, const std::vector<Finding>& findings) {
  const Finding* f = nullptr;
  for (const auto& candidate : findings)
    if (candidate.severity == Severity::Hang && !candidate.pids.empty() && s.find(candidate.pids.front())) {
      f = &candidate;
      break;
    }
  if (!f) return {};
  const ProcessSnapshot& subject = *s.find(f->pids.front());
  int others = 0;
  for (const auto& g : findings) others += &g != f && g.severity == Severity::Hang;
  // The hang's name and the catalog entry it is share the first line: five lines in all.
  auto libs = rules::nccl_libraries_of(subject, f->tids);
  std::vector<std::string> lines;
  const std::string known = known_hang(*f, libs);
  // A shape of no catalog entry says what it is in its own words (the graph's sentence).
  std::string what = known.empty() ? shortened(f->summary, 300) : known;
  lines.push_back(fmt::format("HANG     {}: {}{}", f->title, what,
                              others ? fmt::format(" ({} more finding(s) below)", others) : ""));
  lines.push_back(waits_line(subject, *f));
  if (auto held = held_line(s, subject, *f); !held.empty()) lines.push_back(held);
  std::string key = !f->catalog.empty() ? f->catalog
                    : f->rule == "nccl-descriptor-alias" && f->title.find("NCCL") == std::string::npos
                        ? "descriptor-alias-shape"
                        : f->rule;
  const bool teardown_shape =
      key == "nccl-socket-close-alias" || key == "nccl-descriptor-alias" || key == "descriptor-alias-shape";
  if (auto nccl = nccl_line(libs, teardown_shape); !nccl.empty()) lines.push_back(nccl);
  if (auto todo = do_line(key, f->rule, libs); !todo.empty()) lines.push_back(todo);
  return lines;
}

}  // namespace hangbench::diagnose
