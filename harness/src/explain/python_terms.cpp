// Findings in Python terms: where each concerned process's Python threads stand
// ("`_worker_loop` (worker.py:312)"), and the native calls under that frame
// ("→ `ncclCommAbort` → `commFree`"), appended to a finding's summary.
#include "hangbench/python_terms.hpp"

#include <fmt/format.h>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose {

using rules::join;

namespace {

// Interpreter and libc plumbing between a Python call and the call that blocks.
bool plumbing(const StackFrame& f) {
  const std::string& n = f.function;
  for (const char* prefix : {"_Py", "Py", "method_", "cfunction_", "__", "??", "_PyObject", "vectorcall", "sock_",
                             "pthread_cond", "syscall", "do_", "slot_", "wrapper", "pybind11::", "torch::PyWarning"})
    if (n.rfind(prefix, 0) == 0) return true;
  return f.module.find("libc.so") != std::string::npos || f.module.find("libpython") != std::string::npos ||
         f.module.rfind("python", 0) == 0;
}

}  // namespace

std::string python_frame_text(const StackFrame& f) {
  const auto slash = f.file.rfind('/');
  return fmt::format("`{}` ({}:{})", f.function, slash == std::string::npos ? f.file : f.file.substr(slash + 1),
                     f.line);
}

std::string innermost_python_frame(const StackThread& t) {
  for (const auto& f : t.frames)
    if (f.python) return python_frame_text(f);
  return "";
}

// "`wait_for_peer` (hung.py:28) → `recv`" for one thread, or "" without Python frames.
std::string thread_in_python_terms(const StackThread& t) {
  int python_at = -1;
  for (int i = 0; i < static_cast<int>(t.frames.size()); ++i)
    if (t.frames[i].python) {
      python_at = i;
      break;
    }
  if (python_at < 0) return "";
  std::string out = python_frame_text(t.frames[python_at]);
  std::vector<std::string> calls;  // outermost first
  for (int i = python_at - 1; i >= 0 && calls.size() < 4; --i)
    if (!plumbing(t.frames[i])) calls.push_back("`" + short_function_name(t.frames[i].function) + "`");
  for (const auto& c : calls) out += " → " + c;
  return out;
}

std::string native_calls(const StackThread& t, std::size_t most) {
  std::vector<std::string> calls;  // outermost first
  for (int i = static_cast<int>(t.frames.size()) - 1; i >= 0; --i)
    if (!t.frames[i].python && !plumbing(t.frames[i]))
      calls.push_back("`" + short_function_name(t.frames[i].function) + "`");
  if (t.frames.empty())
    for (auto it = t.functions.rbegin(); it != t.functions.rend(); ++it)
      if (*it != "??") calls.push_back("`" + short_function_name(*it) + "`");
  if (calls.size() > most) calls.erase(calls.begin(), calls.end() - static_cast<long>(most));
  return join(calls, " → ");
}

std::string python_terms(const Snapshot& s, const std::vector<int>& pids) {
  std::vector<std::string> parts;
  for (int pid : pids) {
    const ProcessSnapshot* p = s.find(pid);
    if (!p) continue;
    std::vector<std::string> threads;
    for (const auto& t : p->stacks.threads) {
      std::string where = thread_in_python_terms(t);
      if (where.empty()) continue;
      std::string who =
          t.tid == pid ? "main thread" : fmt::format("thread {} {}", t.tid, thread_title(*p, t.tid, t.name));
      if (p->python.gil_holder_tid == t.tid) who += ", holding the GIL";
      threads.push_back(who + ": " + where);
      if (threads.size() == 2) break;
    }
    if (!threads.empty()) parts.push_back(fmt::format("pid {}'s {}", pid, join(threads, "; ")));
  }
  return parts.empty() ? "" : "In Python terms: " + join(parts, "; ") + ".";
}

}  // namespace hangbench::diagnose
