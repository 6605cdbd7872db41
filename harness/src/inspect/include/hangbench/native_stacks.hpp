// Native stacks of a live process without a debugger process: elfutils' libdwfl
// attaches with ptrace (as eu-stack does), unwinds every thread through
// .eh_frame/.debug_frame, names each frame from the ELF symbols and, where DWARF
// exists, gives file:line and the inlined functions.
#pragma once

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// Every thread of pid, innermost frame first. Bounded by timeout_s: past it the
// unwinding stops, the threads are released and skipped_reason says so.
// Never throws; a process that is gone or may not be traced gives skipped_reason.
DebuggerStacks libdw_stacks(int pid, double timeout_s);

// The C library and the loader (a module's base name: "libc.so.6", "libc-2.31.so"). Their
// frames are named from the symbol table alone (source lines and inlined calls tell nothing
// about a hang, and libc6-dbg's compressed DWARF cost 0.35 s a process), and a thread's start
// routine is its outermost frame outside them (start_thread is unnamed where libc is stripped).
bool is_c_library(const std::string& module);

// "#0  0x00007f.. in poll () from libc.so.6": the gdb-like text of stacks (for the
// Markdown report and for readers used to gdb).
std::string render_gdb_like(const std::vector<StackThread>& threads);

}  // namespace hangbench::diagnose
