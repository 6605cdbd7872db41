// Small predicates the rules share: what a thread waits in, what its stack shows.
#pragma once

#include <string>
#include <vector>

#include "hangbench/diagnose.hpp"

namespace hangbench::evidence::rules {

bool waits_in_poll(const proc::ThreadInfo& t);
bool waits_in_futex(const proc::ThreadInfo& t);
// A native blocking call other than futex: poll, read, recv, accept, sleep, wait...
bool waits_in_native_call(const proc::ThreadInfo& t);
// "poll (wchan poll_schedule_timeout)", "futex", "state R"...
std::string what_it_waits_in(const proc::ThreadInfo& t);

// Debugger frames of a thread, empty when no stacks were captured.
const std::vector<std::string>& stack_of(const ProcessSnapshot& p, int tid);
bool stack_has(const std::vector<std::string>& functions, const std::vector<std::string>& any_of);
std::string join(const std::vector<std::string>& parts, const std::string& sep);

bool is_descendant_of(const Snapshot& s, int pid, int ancestor);
const proc::Descriptor* descriptor_for_inode(const ProcessSnapshot& p, std::uint64_t inode,
                                             proc::DescriptorKind kind = proc::DescriptorKind::Socket);
std::string holders_in_words(const Snapshot& s, const std::vector<Holder>& holders, int relative_to);

// "In Python terms: pid 880's main thread: `wait_for_peer` (train.py:8) → `ncclCommAbort`; ..." or "".
std::string python_terms(const Snapshot& s, const std::vector<int>& pids);

std::vector<Finding> nccl_descriptor_alias(const Snapshot& s);
std::vector<Finding> nccl_alias_risk(const Snapshot& s);
std::vector<Finding> mpi_gil(const Snapshot& s);
std::vector<Finding> stopped_process(const Snapshot& s);
std::vector<Finding> unreaped_zombie(const Snapshot& s);
std::vector<Finding> pipe_reader_blocked(const Snapshot& s);

}  // namespace hangbench::evidence::rules
