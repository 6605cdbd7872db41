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

// "#0  0x00007f.. in poll () from libc.so.6": the gdb-like text of stacks (for the
// Markdown report and for readers used to gdb).
std::string render_gdb_like(const std::vector<StackThread>& threads);

}  // namespace hangbench::diagnose
