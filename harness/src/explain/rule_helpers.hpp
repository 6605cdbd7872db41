// Small predicates the rules share: what a thread waits in, what its stack shows.
#pragma once

#include <string>
#include <vector>

#include "hangbench/findings.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/thread_facts.hpp"

namespace hangbench::diagnose::rules {

using diagnose::short_function_name;
using diagnose::stack_has;
using diagnose::stack_of;
using diagnose::waits_in_poll;
using diagnose::what_it_waits_in;

bool waits_in_futex(const proc::ThreadInfo& t);
// A native blocking call other than futex: poll, read, recv, accept, sleep, wait...
bool waits_in_native_call(const proc::ThreadInfo& t);

// The first stack thread of `p` with a frame for which `inner` holds and, further out
// (frames are innermost first), one for which `outer` holds: a call made from a caller.
struct CallUnder {
  const StackThread* thread = nullptr;
  const StackFrame* call = nullptr;  // the inner frame
};
CallUnder first_call_under(const ProcessSnapshot& p, bool (*inner)(const StackFrame&),
                           bool (*outer)(const StackFrame&));
std::string join(const std::vector<std::string>& parts, const std::string& sep);

bool is_descendant_of(const Snapshot& s, int pid, int ancestor);
const proc::Descriptor* descriptor_for_inode(const ProcessSnapshot& p, std::uint64_t inode,
                                             proc::DescriptorKind kind = proc::DescriptorKind::Socket);
std::string holders_in_words(const Snapshot& s, const std::vector<Holder>& holders, int relative_to);

// "`wait_for_peer` (hung.py:28)": one Python frame.
std::string python_frame_text(const StackFrame& f);
// A thread's innermost Python frame as python_frame_text, "" when it has none.
std::string innermost_python_frame(const StackThread& t);
// "`wait_for_peer` (hung.py:28) → `recv`": a thread's newest Python frame and the
// native calls under it; "" without Python frames.
std::string thread_in_python_terms(const StackThread& t);
// The innermost `most` native calls that are not interpreter or libc plumbing, outermost first
// (names without their parameter lists).
std::string native_calls(const StackThread& t, std::size_t most);

// "In Python terms: pid 880's main thread: `wait_for_peer` (train.py:8) → `ncclCommAbort`; ..." or "".
std::string python_terms(const Snapshot& s, const std::vector<int>& pids);

// The NCCL libraries of a process, sorted: the one in use (its frames are on one of
// `waiting_tids`' stacks, or the only one loaded), the others merely loaded, and
// shims (a library named *shim*, or one the inspector says is not NCCL). Only the
// one in use is inspected when it is known (a vendor build takes a second to read).
struct NcclLibraries {
  std::string in_use;      // "" when unknown
  std::string how;         // "its frames are on thread 880's stack", "the only one loaded", ...
  NcclLibraryFacts facts;  // of in_use
  std::vector<std::string> loaded_only, shims;
  std::vector<std::string> sentences;  // one per library, in words
};
NcclLibraries nccl_libraries_of(const ProcessSnapshot& p, const std::vector<int>& waiting_tids);

std::vector<Finding> nccl_descriptor_alias(const Snapshot& s);
std::vector<Finding> nccl_alias_risk(const Snapshot& s);
std::vector<Finding> mpi_gil(const Snapshot& s);
// A thread in a CUDA synchronisation called from libnccl (rules_gpu_wait.cpp).
std::vector<Finding> nccl_waits_for_gpu(const Snapshot& s);
// A thread inside a kernel launch called from ncclLaunchKernel (rules_launch_blocking.cpp).
std::vector<Finding> nccl_launch_blocks(const Snapshot& s);
std::vector<Finding> nccl_abort_joins_spinning_thread(const Snapshot& s);
std::vector<Finding> stopped_process(const Snapshot& s);
// One sentence per wait-for cycle across processes and ranks (rules_wait_for.cpp).
std::vector<Finding> wait_for_cycles(const Snapshot& s);
std::vector<Finding> unreaped_zombie(const Snapshot& s);
std::vector<Finding> pipe_reader_blocked(const Snapshot& s);

}  // namespace hangbench::diagnose::rules
