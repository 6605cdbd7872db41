// flight_recorder_cannot_dump(): the dump pipe is served by PyTorch's watchdog
// thread; when its stack shows it waiting for a mutex, no dump comes however long
// diagnose waits (the H200's abort hang: 5 s spent for nothing).
#include <fmt/format.h>

#include <algorithm>

#include "hangbench/snapshot.hpp"
#include "hangbench/thread_facts.hpp"

namespace hangbench::diagnose {

namespace {

bool is_lock_frame(const std::string& f) {
  for (const char* name : {"pthread_mutex_lock", "lll_lock_wait", "std::mutex::lock", "__gthread_mutex_lock",
                           "std::lock_guard", "std::unique_lock"})
    if (f.find(name) != std::string::npos) return true;
  return false;
}

// The raw futex call under a lock (or under a condition variable: then no lock frame follows).
bool is_futex_frame(const std::string& f) {
  return f == "??" || f.find("futex") != std::string::npos || f == "syscall" || f == "__GI_syscall";
}

// A thread writing the Flight Recorder's dump: one PyTorch's monitor started for it (it keeps
// the monitor's name but is not in its loop), or any thread in the dump or symbolising.
const StackThread* dump_writer(const ProcessSnapshot& p) {
  auto dumping = [](const std::string& f) {
    for (const char* name : {"dumpDebuggingInfo", "appendSymbolized", "CapturedTraceback", "symbolize"})
      if (f.find(name) != std::string::npos) return true;
    return false;
  };
  for (const auto& t : p.stacks.threads) {
    const bool monitor_child = t.name.rfind("pt_nccl_heartbt", 0) == 0 &&
                               std::none_of(t.functions.begin(), t.functions.end(), [](const std::string& f) {
                                 return f.find("HeartbeatMonitor::runLoop") != std::string::npos;
                               });
    if (monitor_child || std::any_of(t.functions.begin(), t.functions.end(), dumping)) return &t;
  }
  return nullptr;
}

}  // namespace

std::string flight_recorder_cannot_dump(const ProcessSnapshot& p) {
  for (const auto& t : p.stacks.threads) {
    if (t.name.rfind("pt_nccl_watchdg", 0) != 0) continue;
    // Innermost first: the lock frames, then the caller that wants the mutex.
    std::size_t i = 0;
    bool locked = false;
    while (i < t.functions.size() && (is_lock_frame(t.functions[i]) || is_futex_frame(t.functions[i]))) {
      locked = locked || is_lock_frame(t.functions[i]);
      ++i;
    }
    if (!locked) continue;
    std::string under = i < t.functions.size() ? " under " + t.functions[i] : "";
    return fmt::format(
        "the Flight Recorder's watchdog thread {} \"{}\" is blocked in pthread_mutex_lock{} (a mutex the hung "
        "call holds), so the dump cannot come",
        t.tid, t.name, under);
  }
  // The dump needs the GIL (it symbolises Python frames); a holder asleep in native code keeps it.
  const StackThread* writer = dump_writer(p);
  const int holder = p.python.gil_holder_tid;
  if (writer && holder != 0 && holder != writer->tid && !gil_wait_call(writer->functions).empty()) {
    for (const auto& info : p.threads) {
      if (info.tid != holder || (info.state != 'S' && info.state != 'D')) continue;
      return fmt::format(
          "the thread {} \"{}\" writing the Flight Recorder's dump waits for the GIL, which thread {} holds "
          "asleep in native code (state {}), so the dump cannot come while that lasts",
          writer->tid, writer->name, holder, info.state);
    }
  }
  return "";
}

std::string flight_recorder_writer(const ProcessSnapshot& p) {
  const StackThread* t = dump_writer(p);
  if (!t) return "";
  // Its first named frame says what the writing is doing (reading a module, waiting for the GIL).
  const auto named = std::find_if(t->functions.begin(), t->functions.end(),
                                  [](const std::string& f) { return !f.empty() && f != "??"; });
  return fmt::format("thread {} \"{}\" is writing it{}", t->tid, t->name,
                     named == t->functions.end() ? "" : " (in " + named->substr(0, 80) + ")");
}

}  // namespace hangbench::diagnose
