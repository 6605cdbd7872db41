// What one thread of a snapshot is doing, in the words every layer above shares.
#include "hangbench/thread_facts.hpp"

#include <algorithm>

namespace hangbench::diagnose {

namespace {
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

bool waits_in_poll(const proc::ThreadInfo& t) {
  static const std::vector<std::string> calls = {"poll",       "ppoll",       "select",      "pselect6",
                                                 "epoll_wait", "epoll_pwait", "epoll_pwait2"};
  if (std::find(calls.begin(), calls.end(), t.syscall_name) != calls.end()) return true;
  return contains(t.wchan, "poll_schedule_timeout") || contains(t.wchan, "do_sys_poll") ||
         contains(t.wchan, "ep_poll") || contains(t.wchan, "do_select");
}

std::string what_it_waits_in(const proc::ThreadInfo& t) {
  std::string text;
  if (!t.syscall_name.empty())
    text = t.syscall_name;
  else if (t.syscall.kind == proc::SyscallLine::Kind::Running)
    text = "running";
  if (!t.wchan.empty()) text += (text.empty() ? "" : " ") + std::string("(wchan ") + t.wchan + ")";
  if (text.empty()) text = "state " + std::string(1, t.state);
  return text;
}

const std::vector<std::string>& stack_of(const ProcessSnapshot& p, int tid) {
  static const std::vector<std::string> none;
  for (const auto& t : p.stacks.threads)
    if (t.tid == tid) return t.functions;
  return none;
}

bool stack_has(const std::vector<std::string>& functions, const std::vector<std::string>& any_of) {
  for (const auto& f : functions)
    for (const auto& want : any_of)
      if (f == want || f.find(want) != std::string::npos) return true;
  return false;
}

std::string short_function_name(const std::string& name) {
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c != '(' || depth != 0 || i == 0) continue;
    if (name.compare(i, 21, "(anonymous namespace)") == 0) {
      i += 20;
      continue;
    }
    if (i >= 8 && name.compare(i - 8, 8, "operator") == 0) {
      ++i;  // operator(): its own parentheses are part of the name
      continue;
    }
    return name.substr(0, i);
  }
  return name;
}

namespace {

const std::vector<std::string> kGilWaits = {"take_gil",           "PyEval_RestoreThread", "PyEval_AcquireThread",
                                            "PyEval_AcquireLock", "PyGILState_Ensure",    "_PyEval_AcquireLock"};

// Where the interpreter's take_gil is static and stripped (Debian's python3.11): a
// condition variable wait with only unnamed frames between it and the eval loop.
// CPython's own waits that Python code makes (locks, sleep) go through named calls.
bool gil_wait_without_symbols(const std::vector<std::string>& functions) {
  for (std::size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].find("pthread_cond_timedwait") == std::string::npos) continue;
    for (std::size_t j = i + 1; j < functions.size(); ++j) {
      if (functions[j] == "_PyEval_EvalFrameDefault" || functions[j] == "PyEval_RestoreThread") return j > i + 1;
      if (functions[j] != "??") return false;
    }
    return false;
  }
  return false;
}

}  // namespace

std::string gil_wait_call(const std::vector<std::string>& functions) {
  for (const auto& f : functions)
    for (const auto& n : kGilWaits)
      if (f == n) return n;
  return gil_wait_without_symbols(functions) ? "take_gil" : "";  // its timed wait wakes and spins
}

}  // namespace hangbench::diagnose
