// A thread in Python terms: its Python frames and the native calls under them, as the
// findings, the headline and the renderings say them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

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

}  // namespace hangbench::diagnose
