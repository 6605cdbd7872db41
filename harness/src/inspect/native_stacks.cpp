// libdw_stacks(): the in-process unwinder. One Dwfl per process, so several
// processes are read at once from different threads.
#include "hangbench/native_stacks.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "hangbench/proc.hpp"

namespace hangbench::diagnose {

namespace {

using Clock = std::chrono::steady_clock;

std::string demangle(const char* name) {
  if (!name) return "??";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

std::string base_name(const char* path) {
  if (!path) return "";
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// The name of an inlined subroutine lives on its abstract origin.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  Dwarf_Die origin;
  Dwarf_Die* named = die;
  for (int hop = 0; hop < 4; ++hop) {
    if (const char* linkage = dwarf_formstring(dwarf_attr_integrate(named, DW_AT_linkage_name, &attr)))
      return demangle(linkage);
    if (const char* name = dwarf_diename(named)) return name;
    if (!dwarf_attr(named, DW_AT_abstract_origin, &attr) || !dwarf_formref_die(&attr, &origin)) break;
    named = &origin;
  }
  return "??";
}

struct Walk {
  Dwfl* dwfl = nullptr;
  Clock::time_point deadline;
  bool out_of_time = false;
  std::vector<StackThread> threads;
  Clock::duration naming{};                                 // time spent in add_frames (symbols, lines, inlined calls)
  std::map<std::string, Clock::duration> naming_by_module;  // the same, per module (its first frame loads its tables)
};

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The frames at one pc: the inlined calls innermost first, then the function that holds them.
void add_frames_timed(Walk& walk, Dwarf_Addr pc, bool activation, StackThread& thread);

void add_frames(Walk& walk, Dwarf_Addr pc, bool activation, StackThread& thread) {
  const auto begun = Clock::now();
  const std::size_t before = thread.frames.size();
  add_frames_timed(walk, pc, activation, thread);
  const auto spent = Clock::now() - begun;
  walk.naming += spent;
  if (thread.frames.size() > before) walk.naming_by_module[base_name(thread.frames.back().module.c_str())] += spent;
}

void add_frames_timed(Walk& walk, Dwarf_Addr pc, bool activation, StackThread& thread) {
  Dwarf_Addr lookup = activation ? pc : pc - 1;  // a return address points after the call
  Dwfl_Module* module = dwfl_addrmodule(walk.dwfl, lookup);
  StackFrame outer;
  outer.pc = pc;
  const char* module_path = nullptr;
  if (module) {
    // The main file's name is known once libdw has opened it; until then, the name
    // the memory map reported (the same path).
    const char* reported_name =
        dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, &module_path, nullptr);
    if (!module_path) module_path = reported_name;
    outer.module = base_name(module_path);
    // Two NCCL libraries of one file name may be loaded (torch's and a preloaded
    // one): their frames keep the whole path, which says which one is running.
    if (outer.module.rfind("libnccl", 0) == 0 && module_path) outer.module = module_path;
    GElf_Off offset = 0;
    GElf_Sym sym;
    outer.function = demangle(dwfl_module_addrinfo(module, lookup, &offset, &sym, nullptr, nullptr, nullptr));
    // A versioned symbol's "@GLIBC_2.2.5" names the ABI, not the function.
    if (auto at = outer.function.find('@'); at != std::string::npos && at > 0) outer.function.resize(at);
  } else {
    outer.function = "??";
  }
  if (!module || is_c_library(outer.module)) {
    thread.frames.push_back(outer);
    return;
  }
  const char* file = nullptr;
  int line = 0;
  if (Dwfl_Line* src = dwfl_module_getsrc(module, lookup))
    file = dwfl_lineinfo(src, nullptr, &line, nullptr, nullptr, nullptr);
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module, lookup, &bias);
  Dwarf_Die* scopes = nullptr;
  int nscopes = cu ? dwarf_getscopes(cu, lookup - bias, &scopes) : 0;
  // scopes[0] is innermost. Each inlined subroutine runs at (file, line); its call
  // site (DW_AT_call_file/line) is where the next outer function stands.
  Dwarf_Files* files = nullptr;
  if (cu) dwarf_getsrcfiles(cu, &files, nullptr);
  for (int i = 0; i < nscopes; ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    StackFrame f;
    f.function = die_function_name(&scopes[i]);
    f.module = outer.module;
    f.file = base_name(file);
    f.line = line;
    if (tag == DW_TAG_subprogram) {
      f.pc = pc;
      if (f.function == "??") f.function = outer.function;
      thread.frames.push_back(f);
      std::free(scopes);
      return;
    }
    f.inlined = true;
    thread.frames.push_back(f);
    Dwarf_Attribute attr;
    Dwarf_Word call_file = 0, call_line = 0;
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &call_file) == 0 && files)
      file = dwarf_filesrc(files, call_file, nullptr, nullptr);
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &call_line) == 0)
      line = static_cast<int>(call_line);
  }
  std::free(scopes);
  outer.file = base_name(file);
  outer.line = line;
  thread.frames.push_back(outer);
}

int on_frame(Dwfl_Frame* state, void* arg) {
  auto& walk = *static_cast<Walk*>(arg);
  if (Clock::now() > walk.deadline) {
    walk.out_of_time = true;
    return DWARF_CB_ABORT;
  }
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  auto& thread = walk.threads.back();
  add_frames(walk, pc, activation, thread);
  return thread.frames.size() > 512 ? DWARF_CB_ABORT : DWARF_CB_OK;  // a corrupt stack can loop
}

int on_thread(Dwfl_Thread* thread, void* arg) {
  auto& walk = *static_cast<Walk*>(arg);
  if (Clock::now() > walk.deadline) {
    walk.out_of_time = true;
    return DWARF_CB_ABORT;
  }
  StackThread t;
  t.tid = static_cast<int>(dwfl_thread_tid(thread));
  walk.threads.push_back(std::move(t));
  // A thread that ends in garbage still keeps the frames found before: errors are not fatal here.
  dwfl_thread_getframes(thread, on_frame, arg);
  for (const auto& f : walk.threads.back().frames) walk.threads.back().functions.push_back(f.function);
  return walk.out_of_time ? DWARF_CB_ABORT : DWARF_CB_OK;
}

std::string thread_name(int pid, int tid) {
  auto text = proc::read_text("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (!text) return "";
  std::string name = *text;
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return name;
}

}  // namespace

bool is_c_library(const std::string& module) {
  for (const char* prefix :
       {"libc.so", "libc-", "ld-linux", "libpthread.so", "libpthread-", "libm.so", "libdl.so", "librt.so"})
    if (module.rfind(prefix, 0) == 0) return true;
  return false;
}

DebuggerStacks libdw_stacks(int pid, double timeout_s) {
  auto started = Clock::now();
  DebuggerStacks st;
  st.attempted = true;
  st.debugger = "libdw";
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                           &debuginfo_path};
  std::unique_ptr<Dwfl, decltype(&dwfl_end)> dwfl(dwfl_begin(&callbacks), &dwfl_end);
  if (!dwfl) {
    st.skipped_reason = std::string("libdw could not start: ") + dwfl_errmsg(-1);
    return st;
  }
  dwfl_report_begin(dwfl.get());
  int reported = dwfl_linux_proc_report(dwfl.get(), pid);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  const auto report_done = Clock::now();
  st.phase_seconds["report"] = seconds_between(started, report_done);
  if (reported != 0) {
    st.skipped_reason = fmt::format("pid {}'s memory map could not be read ({})", pid,
                                    reported > 0 ? std::strerror(reported) : dwfl_errmsg(-1));
    return st;
  }
  if (int err = dwfl_linux_proc_attach(dwfl.get(), pid, false); err != 0) {
    std::string why = err > 0 ? std::strerror(err) : dwfl_errmsg(-1);
    st.skipped_reason = err == EPERM ? fmt::format(
                                           "ptrace is not permitted on pid {} ({}: yama ptrace_scope, "
                                           "another tracer, container or other user)",
                                           pid, why)
                                     : fmt::format("could not attach to pid {}: {}", pid, why);
    return st;
  }
  const auto attached = Clock::now();
  st.phase_seconds["attach"] = seconds_between(report_done, attached);
  Walk walk;
  walk.dwfl = dwfl.get();
  walk.deadline = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  dwfl_getthreads(dwfl.get(), on_thread, &walk);
  const auto walked = Clock::now();
  const double naming = std::chrono::duration<double>(walk.naming).count();
  st.phase_seconds["symbols"] = naming;
  for (const auto& [module, spent] : walk.naming_by_module) {
    const double seconds = std::chrono::duration<double>(spent).count();
    if (seconds >= 0.005)
      st.phase_seconds["symbols in " + (module.empty() ? std::string("(no module)") : module)] = seconds;
  }
  st.phase_seconds["unwind"] = seconds_between(attached, walked) - naming;
  dwfl.reset();  // detaches: the threads run again
  st.phase_seconds["detach"] = seconds_between(walked, Clock::now());
  for (auto& t : walk.threads) t.name = thread_name(pid, t.tid);
  st.threads = std::move(walk.threads);
  st.raw = render_gdb_like(st.threads);
  st.timed_out = walk.out_of_time;
  if (walk.out_of_time)
    st.skipped_reason =
        fmt::format("unwinding did not finish within {} s; the frames read until then are kept", timeout_s);
  else if (st.threads.empty())
    st.skipped_reason = "libdw found no thread to unwind";
  st.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return st;
}

std::string render_gdb_like(const std::vector<StackThread>& threads) {
  std::string out;
  int number = static_cast<int>(threads.size());
  for (const auto& t : threads) {
    out += fmt::format("Thread {} (LWP {}) \"{}\":\n", number--, t.tid, t.name);
    int i = 0;
    for (const auto& f : t.frames) {
      std::string at = f.file.empty() ? "" : fmt::format(" at {}:{}", f.file, f.line);
      if (f.python)
        out += fmt::format("#{:<3}[python] {} ({}:{})\n", i++, f.function, f.file, f.line);
      else if (f.inlined || f.pc == 0)
        out += fmt::format("#{:<3}{} (){}\n", i++, f.function, at);
      else
        out += fmt::format("#{:<3}0x{:016x} in {} (){}{}\n", i++, f.pc, f.function, at,
                           f.module.empty() || !at.empty() ? "" : " from " + f.module);
    }
    out += "\n";
  }
  return out;
}

}  // namespace hangbench::diagnose
