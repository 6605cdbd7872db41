// What one thread of a snapshot is doing, read from its syscall and its stack: the
// small predicates that the wait-for graph and the rules above it share.
#pragma once

#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

bool waits_in_poll(const proc::ThreadInfo& t);
// "poll (wchan poll_schedule_timeout)", "futex", "state R"...
std::string what_it_waits_in(const proc::ThreadInfo& t);
// Debugger frames of a thread, empty when no stacks were captured.
const std::vector<std::string>& stack_of(const ProcessSnapshot& p, int tid);
bool stack_has(const std::vector<std::string>& functions, const std::vector<std::string>& any_of);
// A demangled name without its parameter list: "c10d::NCCLComm::abort(std::optional<…>)" →
// "c10d::NCCLComm::abort" ("(anonymous namespace)::" and "operator()" kept whole).
std::string short_function_name(const std::string& name);
// The GIL call a thread waits in, innermost first ("" when none): a named one, or "take_gil"
// where the interpreter's is static and stripped (a condition-variable wait with only
// unnamed frames up to the eval loop). Frames as the graph cleans them (no @version, no __GI_).
std::string gil_wait_call(const std::vector<std::string>& functions);

}  // namespace hangbench::diagnose
