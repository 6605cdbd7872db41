// Small predicates the rules share: what a thread waits in, what its stack shows.
#pragma once

#include <string>
#include <vector>

#include "hangbench/findings.hpp"
#include "hangbench/nccl_in_use.hpp"
#include "hangbench/python_terms.hpp"
#include "hangbench/thread_facts.hpp"

namespace hangbench::diagnose::rules {

using diagnose::short_function_name;
using diagnose::stack_has;
using diagnose::stack_of;
using diagnose::waits_in_poll;
using diagnose::what_it_waits_in;
// Said in words for the renderings too (hangbench/python_terms.hpp, hangbench/nccl_in_use.hpp).
using diagnose::innermost_python_frame;
using diagnose::native_calls;
using diagnose::nccl_libraries_of;
using diagnose::NcclLibraries;
using diagnose::python_frame_text;
using diagnose::python_terms;
using diagnose::thread_in_python_terms;

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

std::vector<Finding> nccl_descriptor_alias(const Snapshot& s);
std::vector<Finding> nccl_alias_risk(const Snapshot& s);
std::vector<Finding> mpi_gil(const Snapshot& s);
// A thread in a CUDA synchronisation called from libnccl (rules_gpu_wait.cpp).
std::vector<Finding> nccl_waits_for_gpu(const Snapshot& s);
// A thread inside a kernel launch called from ncclLaunchKernel (rules_launch_blocking.cpp).
std::vector<Finding> nccl_launch_blocks(const Snapshot& s);
std::vector<Finding> nccl_bootstrap_silent_peer(const Snapshot& s);
std::vector<Finding> nccl_abort_joins_spinning_thread(const Snapshot& s);
std::vector<Finding> stopped_process(const Snapshot& s);
// One sentence per wait-for cycle across processes and ranks (rules_wait_for.cpp).
std::vector<Finding> wait_for_cycles(const Snapshot& s);
std::vector<Finding> unreaped_zombie(const Snapshot& s);
std::vector<Finding> pipe_reader_blocked(const Snapshot& s);

}  // namespace hangbench::diagnose::rules
