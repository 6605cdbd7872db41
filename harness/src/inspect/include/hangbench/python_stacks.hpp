// Python frames of a live CPython process, read from its memory the way py-spy
// does: _PyRuntime is found through the ELF symbols of the executable or
// libpython, the interpreter's thread states and frames are followed with
// version-specific offsets (3.9, 3.10, 3.11, 3.12; 3.13 and later through the
// _Py_DebugOffsets at the start of _PyRuntime). Nothing is carried or executed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// Never throws. A process that is not CPython, or a version without known
// offsets, gives skipped_reason (its native frames are unaffected).
PythonStacks read_python_stacks(int pid);

// The native frames of one thread with the Python frames put where each
// _PyEval_EvalFrameDefault stands, as `py-spy dump --native` shows them.
// Frames left over (the counts disagree) go where the outermost evaluator stands.
std::vector<StackFrame> merge_python_frames(const std::vector<StackFrame>& native, const PythonThread& python);

// The line of the instruction at code-unit index `instruction` in a 3.11+
// co_linetable (PEP 626 location table), or nullopt when it has no line.
std::optional<int> line_from_location_table(const std::string& table, int first_line, int instruction);
// The line of the instruction at `byte_offset` in 3.9's co_lnotab.
int line_from_lnotab(const std::string& table, int first_line, int byte_offset);
// The line of the instruction at `byte_offset` in 3.10's co_linetable, or nullopt when it has no line.
std::optional<int> line_from_linetable_3_10(const std::string& table, int first_line, int byte_offset);

}  // namespace hangbench::diagnose
