// The first five lines of a diagnosis: what hangs (and the known hang it is), who waits,
// who holds it, which NCCL runs, what to do. Everything else in the report is the detail behind them.
#include "hangbench/headline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "explain/rule_helpers.hpp"
#include "graph/thread_wait.hpp"
#include "hangbench/catalog.hpp"

namespace hangbench::diagnose {

using rules::join;

namespace {

// Characters, not bytes: the headline's arrows and quotes are several bytes each.
std::size_t characters(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// The text cut at a space so that it and " ..." are at most `most` characters.
std::string shortened(const std::string& text, std::size_t most) {
  if (characters(text) <= most) return text;
  std::size_t kept = 0, cut = std::string::npos, n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (n + 4 > most) break;
    if (text[i] == ' ') cut = i;
    kept = i;
    ++n;
  }
  if (cut == std::string::npos) cut = kept;
  return text.substr(0, cut) + " ...";
}

}  // namespace

void fit_headline(std::vector<std::string>& lines, std::size_t most_characters) {
  // The longest line gives way first, down to the next longest, so that no line is cut
  // to nothing while another keeps all its words; a line keeps at least its label and a few words.
  constexpr std::size_t kShortest = 60;
  for (int round = 0; round < 64; ++round) {
    std::size_t total = lines.empty() ? 0 : lines.size() - 1;
    for (const auto& line : lines) total += characters(line);
    if (total <= most_characters) return;
    std::size_t longest = 0, runner_up = 0, at = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::size_t n = characters(lines[i]);
      if (n > longest) {
        runner_up = longest;
        longest = n;
        at = i;
      } else if (n > runner_up) {
        runner_up = n;
      }
    }
    if (longest <= kShortest) return;
    const std::size_t over = total - most_characters;
    std::size_t target = longest > over ? longest - over : 0;
    if (runner_up < longest)
      target = std::max(target, runner_up);
    else
      target = std::max(target, longest - std::max<std::size_t>(1, over / 2));
    target = std::max(target, kShortest);
    const std::string cut = shortened(lines[at], target);
    if (cut == lines[at]) return;
    lines[at] = cut;
  }
}

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
  // The thread's name only where it says more than the process's.
  std::string title = thread_title(p, tid, thread_name);
  if (title == "\"" + p.info.comm + "\"") title.clear();
  return fmt::format("WAITS    {}, thread {}{}{}", who(p), tid, title.empty() ? "" : " " + title,
                     where.empty() ? "" : ": " + plain_function_names(where));
}

// Children of one parent under one name are one group ("pids 623 and 624 (pt_data_worker),
// children of the waiting process, forked 7.2 s after it started"): a DataLoader's workers.
struct HolderGroup {
  std::string comm;
  int parent = 0;
  std::vector<int> pids;
  std::vector<double> forked_after;  // seconds after the parent started, where both are known
};

std::string group_words(const Snapshot& s, const HolderGroup& g, const ProcessSnapshot& subject) {
  std::string pids;
  for (std::size_t i = 0; i < g.pids.size(); ++i)
    pids += (i == 0 ? "" : i + 1 == g.pids.size() ? " and " : ", ") + std::to_string(g.pids[i]);
  const bool many = g.pids.size() > 1;
  std::string words = fmt::format("{} {} ({}), ", many ? "pids" : "pid", pids, g.comm);
  const ProcessSnapshot* parent = s.find(g.parent);
  if (!parent) return words + fmt::format("{} of pid {}", many ? "children" : "a child", g.parent);
  words += (many ? "children of " : "a child of ") +
           (parent->info.pid == subject.info.pid ? std::string("the waiting process") : who(*parent));
  if (!g.forked_after.empty()) {
    auto [low, high] = std::minmax_element(g.forked_after.begin(), g.forked_after.end());
    words += *high - *low < 0.05 ? fmt::format(", forked {:.1f} s after it started", *low)
                                 : fmt::format(", forked {:.1f} to {:.1f} s after it started", *low, *high);
  }
  return words;
}

std::string held_line(const Snapshot& s, const ProcessSnapshot& subject, const Finding& f) {
  std::vector<std::string> parts;
  std::vector<HolderGroup> groups;
  std::vector<int> seen;
  std::size_t named = 0;
  for (std::size_t i = 1; i < f.pids.size(); ++i) {
    int pid = f.pids[i];
    if (pid == subject.info.pid || std::find(seen.begin(), seen.end(), pid) != seen.end()) continue;
    seen.push_back(pid);
    const auto* h = s.find(pid);
    if (!h) continue;
    // Another rank of the job is named as a rank, with what its main thread waits in; a
    // forked worker or a helper by how it came to hold the resource.
    if (h->rank >= 0 && h->rank != subject.rank) {
      if (parts.size() + groups.size() >= 2) continue;
      // What the wait-for graph reads in its main thread ("ncclGroupEnd", "read"), which
      // names NCCL's or MPI's wait where the syscall alone would say "clock_nanosleep".
      std::string in;
      for (const auto& t : h->threads)
        if (t.tid == pid) {
          const ThreadWait w = thread_wait(*h, t);
          in = w.kind == ThreadWait::Kind::Running ? "running" : w.call;
        }
      parts.push_back(who(*h) + (in.empty()        ? ""
                                 : in == "running" ? ", its main thread running"
                                                   : ", its main thread in " + in));
      ++named;
      continue;
    }
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const HolderGroup& x) { return x.comm == h->info.comm && x.parent == h->info.ppid; });
    if (g == groups.end()) {
      if (parts.size() + groups.size() >= 2) continue;
      groups.push_back({h->info.comm, h->info.ppid, {}, {}});
      g = groups.end() - 1;
    }
    g->pids.push_back(pid);
    if (const auto* parent = s.find(h->info.ppid); parent && parent->info.start_unix > 0 && h->info.start_unix > 0)
      g->forked_after.push_back(h->info.start_unix - parent->info.start_unix);
    ++named;
  }
  for (const auto& g : groups) parts.push_back(group_words(s, g, subject));
  if (parts.empty()) return "";
  std::string more = seen.size() > named ? fmt::format("; and {} more", seen.size() - named) : "";
  return "HELD BY  " + join(parts, "; ") + more;
}

// A long path keeps its last four parts: ".../nvidia/nccl/lib/libnccl.so.2" still says whose
// copy it is; the whole path is under NCCL LIBRARIES.
std::string short_path(const std::string& path) {
  if (path.size() <= 60) return path;
  std::size_t at = path.size();
  for (int parts = 0; parts < 4 && at != std::string::npos && at > 0; ++parts) at = path.rfind('/', at - 1);
  return at == std::string::npos || at == 0 ? path : "..." + path.substr(at);
}

// The teardown hang's question (does ncclSocketClose call shutdown()?) only where the hang
// is that shape and the bytes answered it: under any other it is noise about a healthy library.
// `terse` leaves out how the library in use was told apart (on the waiting stack, the only one).
std::string nccl_line(const rules::NcclLibraries& libs, bool teardown_shape, bool terse = false) {
  if (libs.in_use.empty()) {
    std::vector<std::string> all;
    for (const auto& path : libs.loaded_only) all.push_back(short_path(path));
    if (all.empty()) return "";
    return "NCCL     several loaded; which one waits needs --stacks: " + join(all, ", ");
  }
  std::string verdict = libs.facts.calls_shutdown == "yes"  ? "; its sockets are shut down before close (fixed)"
                        : libs.facts.calls_shutdown == "no" ? "; it closes sockets without shutdown(), like 2.17.1"
                                                            : "";
  // The other copies loaded and the shims are listed under NCCL LIBRARIES.
  return fmt::format("NCCL     {} {}{}{}", libs.facts.version.empty() ? "of unknown version" : libs.facts.version,
                     short_path(libs.in_use), terse || libs.how.empty() ? "" : " (" + libs.how + ")",
                     teardown_shape ? verdict : "");
}

// The known hang this is (catalog/*.toml): its entry, the NCCL library in use and
// where that build stands against the measured and the claimed ranges; "" when the
// shape is no entry of the catalog (the finding's own words say what it is).
std::string known_hang(const Finding& f, const rules::NcclLibraries& libs) {
  if (f.catalog.empty()) return "";
  catalog::LibraryInUse nccl{libs.in_use, libs.facts.version, libs.facts.sha256};
  return catalog::attribute(f.rule, f.title, f.summary, nccl, f.facts).brief;
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

// "hung 0/40 with it, 40/40 without": a remedy is the side of its comparison that hung less,
// whichever order the comparison names them in (catalog_test holds every remedy to that).
std::string tally(const Remedy& r) {
  const auto sides = catalog::hung_less_first(r.a_hangs, r.b_hangs);
  if (!sides) return fmt::format("{} vs {} hung", r.a_hangs, r.b_hangs);
  return fmt::format("hung {} with it, {} without", sides->first, sides->second);
}

// The remedies' actions and their measured tallies, as many as fit; the reports that back
// them are listed under FINDINGS.
std::string do_line(const std::string& key, const std::string& rule, const rules::NcclLibraries& libs,
                    std::size_t most) {
  auto remedies = remedies_for(key);
  // A library that already calls shutdown() has the fix: upgrading is no remedy.
  if ((key == "nccl-descriptor-alias" || key == "nccl-socket-close-alias") && libs.facts.calls_shutdown == "yes" &&
      !remedies.empty())
    remedies.erase(remedies.begin());
  std::string text;
  std::size_t shown = 0;
  for (const auto& r : remedies) {
    std::string part = fmt::format("{} ({})", r.action, tally(r));
    if (!text.empty() && characters(text) + characters(part) + 2 + 24 > most) break;
    text += (text.empty() ? "" : "; ") + part;
    ++shown;
  }
  if (shown < remedies.size()) text += fmt::format("; {} more below", remedies.size() - shown);
  if (text.empty()) text = generic_step(rule);
  return text.empty() ? "" : "DO       " + text;
}

// A shape of no catalog entry says what it is in the first sentence of its own words,
// without repeating its title ("The descriptor-alias teardown shape: pid 880 ...").
std::string first_sentence(const Finding& f) {
  std::string text = f.summary;
  auto lower = [](std::string t) {
    for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  if (lower(text).rfind(lower(f.title) + ":", 0) == 0)
    text = text.substr(f.title.size() + 1);
  else if (lower(text).rfind("the " + lower(f.title) + ":", 0) == 0)
    text = text.substr(f.title.size() + 5);
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  for (std::size_t i = 0; i + 2 < text.size(); ++i)
    if (text[i] == '.' && text[i + 1] == ' ' && std::isupper(static_cast<unsigned char>(text[i + 2])))
      return text.substr(0, i);
  return text;
}

}  // namespace

namespace {

// Which hang the headline tells when several matched: a known hang of the catalog first, then
// the pattern that explains the others (a collective mismatch or a GIL convoy closes a ring of
// waits, which a pipe-reader finding only sees one end of), in this order; ties keep the rules' order.
int headline_rank(const Finding& f) {
  if (!f.catalog.empty()) return 0;
  // A "ring" of one thread waiting for itself (a reader that holds its pipe's write end) says
  // less than the finding about that pipe: it keeps the rules' order with the others.
  const bool degenerate_ring = f.rule == "wait-cycle" && f.tids.size() < 2;
  static const std::vector<std::string> order = {"collective-mismatch", "p2p-unmatched",      "gil-convoy",
                                                 "missing-rank",        "blocked-by-stopped", "wait-cycle"};
  auto at = degenerate_ring ? order.end() : std::find(order.begin(), order.end(), f.rule);
  return at == order.end() ? static_cast<int>(order.size()) + 1 : static_cast<int>(at - order.begin()) + 1;
}

}  // namespace

namespace {

template <typename Subject>
const Finding* best_hang(const std::vector<Finding>& findings, Subject has_subject) {
  const Finding* best = nullptr;
  for (const auto& candidate : findings) {
    if (candidate.severity != Severity::Hang || candidate.pids.empty() || !has_subject(candidate)) continue;
    if (!best || headline_rank(candidate) < headline_rank(*best)) best = &candidate;
  }
  return best;
}

}  // namespace

const Finding* headline_finding(const Snapshot& s, const std::vector<Finding>& findings) {
  return best_hang(findings, [&](const Finding& f) { return s.find(f.pids.front()) != nullptr; });
}

const Finding* headline_finding(const std::vector<Finding>& findings) {
  return best_hang(findings, [](const Finding&) { return true; });
}

std::string known_hang_sentence(const Snapshot& s, const Finding& f) {
  if (f.catalog.empty() || f.pids.empty()) return "";
  const ProcessSnapshot* subject = s.find(f.pids.front());
  if (!subject) return "";
  auto libs = rules::nccl_libraries_of(*subject, f.tids);
  catalog::LibraryInUse nccl{libs.in_use, libs.facts.version, libs.facts.sha256};
  return catalog::attribute(f.rule, f.title, f.summary, nccl, f.facts).sentence;
}

std::vector<std::string> headline_lines(const Snapshot& s, const std::vector<Finding>& findings) {
  const Finding* f = headline_finding(s, findings);
  if (!f) return {};
  const ProcessSnapshot& subject = *s.find(f->pids.front());
  int others = 0;
  for (const auto& g : findings) others += &g != f && g.severity == Severity::Hang;
  // The hang's name and the catalog entry it is share the first line: five lines in all.
  auto libs = rules::nccl_libraries_of(subject, f->tids);
  std::vector<std::string> lines;
  const std::string known = known_hang(*f, libs);
  std::string what = known.empty() ? first_sentence(*f) : known;
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
  // What to do gets what the lines above leave of the bound, and never less than a remedy's room.
  std::size_t used = lines.size();
  for (const auto& line : lines) used += characters(line);
  const std::size_t room = used < kHeadlineCharacters ? kHeadlineCharacters - used : 0;
  if (auto todo = do_line(key, f->rule, libs, room); !todo.empty()) {
    // The NCCL line is the detail a reader can spare first (NCCL LIBRARIES has it all).
    used += characters(todo);
    for (auto& line : lines)
      if (line.rfind("NCCL ", 0) == 0 && used > kHeadlineCharacters) {
        const std::string terse = nccl_line(libs, teardown_shape, true);
        used -= characters(line) - characters(terse);
        line = terse;
      }
    lines.push_back(todo);
  }
  fit_headline(lines, kHeadlineCharacters);
  return lines;
}

}  // namespace hangbench::diagnose
