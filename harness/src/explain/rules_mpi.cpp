// The MPI progress / GIL shape: a Python process with MPI loaded where one
// thread waits for the GIL (a futex) while another sits in a native blocking
// call, typically an MPI wait that needs progress the waiting thread would make.
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose::rules {

namespace {

const std::vector<std::string> kGilWaitFrames = {"take_gil", "PyEval_RestoreThread", "PyGILState_Ensure",
                                                 "PyEval_AcquireThread"};
const std::vector<std::string> kPythonFrames = {"_PyEval_EvalFrameDefault", "PyEval_EvalCode", "_PyObject_"};

bool has_library(const ProcessSnapshot& p, const char* part) {
  return std::any_of(p.libraries.begin(), p.libraries.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

bool is_python(const ProcessSnapshot& p) {
  if (has_library(p, "libpython")) return true;  // Debian's python3 links libpython statically
  std::string exe = p.info.cmdline.empty() ? p.info.comm : p.info.cmdline[0];
  exe = exe.substr(exe.rfind('/') + 1);
  return exe.rfind("python", 0) == 0 || p.info.comm.rfind("python", 0) == 0;
}

}  // namespace

std::vector<Finding> mpi_gil(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target || !is_python(p) || !has_library(p, "libmpi")) continue;
    bool have_stacks = !p.stacks.threads.empty();
    std::vector<const proc::ThreadInfo*> gil_waiters, native_waiters, holders;
    for (const auto& t : p.threads) {
      const auto& frames = stack_of(p, t.tid);
      if (have_stacks) {
        if (stack_has(frames, kGilWaitFrames))
          gil_waiters.push_back(&t);
        else if (stack_has(frames, kPythonFrames) && !waits_in_futex(t))
          holders.push_back(&t);
        else if (waits_in_native_call(t) || t.state == 'R')
          native_waiters.push_back(&t);
      } else {
        if (waits_in_futex(t))
          gil_waiters.push_back(&t);
        else if (waits_in_native_call(t) || t.state == 'R')
          native_waiters.push_back(&t);
      }
    }
    std::vector<const proc::ThreadInfo*> blockers = holders.empty() ? native_waiters : holders;
    if (gil_waiters.empty() || blockers.empty()) continue;
    Finding f;
    f.rule = "mpi-gil";
    f.title = have_stacks ? "MPI progress / GIL deadlock" : "MPI progress / GIL shape";
    f.severity = have_stacks && !holders.empty() ? Severity::Hang : Severity::Note;
    f.pids = {p.info.pid};
    auto describe = [&](const proc::ThreadInfo* t) {
      const auto& frames = stack_of(p, t->tid);
      return fmt::format(
          "thread {} \"{}\" in {}{}", t->tid, t->name, what_it_waits_in(*t),
          frames.empty()
              ? ""
              : " [" + join({frames.begin(), frames.begin() + std::min<std::size_t>(frames.size(), 6)}, " <- ") + "]");
    };
    for (const auto* t : gil_waiters)
      f.facts.push_back((have_stacks ? "waits for the GIL: " : "waits on a futex: ") + describe(t));
    for (const auto* t : blockers)
      f.facts.push_back((holders.empty() ? "in a native blocking call: " : "likely holds the GIL: ") + describe(t));
    for (const auto& lib : p.libraries)
      if (lib.find("libmpi") != std::string::npos || lib.find("libpython") != std::string::npos)
        f.facts.push_back("loaded: " + lib);
    if (!holders.empty()) {
      f.summary = fmt::format(
          "pid {} ({}) is a Python process with MPI: {} thread(s) wait for the GIL ({}) while thread {} \"{}\" likely "
          "holds it and sits in {}. If that thread waits for MPI progress that only a GIL-waiting thread can make, "
          "neither moves: release the GIL around blocking MPI calls, or drive progress from a thread that never "
          "needs it.",
          p.info.pid, p.info.comm, gil_waiters.size(),
          join(
              [&] {
                std::vector<std::string> ids;
                for (const auto* t : gil_waiters) ids.push_back(std::to_string(t->tid));
                return ids;
              }(),
              ", "),
          holders.front()->tid, holders.front()->name, what_it_waits_in(*holders.front()));
    } else {
      f.summary = fmt::format(
          "pid {} ({}) is a Python process with MPI loaded where {} thread(s) wait on a futex (the GIL, when stacks "
          "confirm it) while {} thread(s) sit in a native call; this is the MPI progress / GIL shape. Run again "
          "with --stacks to see which thread holds the GIL.",
          p.info.pid, p.info.comm, gil_waiters.size(), blockers.size());
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
