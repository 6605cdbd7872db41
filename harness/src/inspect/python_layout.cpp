// No offset is typed here: every one comes from python_layouts_generated.inc, which
// ci/gen_python_layouts.py writes from CPython's own headers (offsetof()/sizeof()
// compiled over them with gcc -DPy_BUILD_CORE; that file names the exact version and
// header tree of each block, and the test PythonLayoutsGenerated.* regenerates the
// versions whose headers are on the machine). 3.9 to 3.12: a row of named values per
// version, read below into a PythonLayout; 3.13: CPython publishes its own offsets in
// the _Py_DebugOffsets at the start of _PyRuntime, read through the generated mirror of
// that struct by field name. What is decided here is only what each version means by
// them (which frame chain, which line table, where the GIL lives).
#include "inspect/python_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hangbench::diagnose {

namespace {

#include "inspect/python_layouts_generated.inc"

static_assert(CPythonOffsets::kAbsent == PythonLayout::kNone);

const CPythonOffsets* offsets_of(int minor) {
  for (const auto& row : kCPythonOffsets)
    if (row.minor == minor) return &row;
  return nullptr;
}

}  // namespace

const std::size_t kDebugOffsetsBytes = sizeof(PyDebugOffsets313);

std::optional<PythonLayout> fixed_python_layout(int major, int minor) {
  const CPythonOffsets* row = major == 3 ? offsets_of(minor) : nullptr;
  if (!row) return std::nullopt;
  const CPythonOffsets& o = *row;
  PythonLayout l;
  l.minor = minor;
  l.runtime_interpreters_head = o.runtime_interpreters_head;
  l.interp_next = o.interp_next;
  l.interp_threads_head = o.interp_threads_head;
  if (o.interp_ceval_gil != CPythonOffsets::kAbsent) {  // 3.12: interp->ceval.gil points to it
    l.gil_base = PythonLayout::GilBase::InterpreterPointer;
    l.gil_pointer = o.interp_ceval_gil;
    l.gil_holder = o.gil_last_holder;
    l.gil_locked = o.gil_locked;
  } else {  // _PyRuntime.ceval.gil
    l.gil_base = PythonLayout::GilBase::Runtime;
    l.gil_holder = o.runtime_ceval_gil + o.gil_last_holder;
    l.gil_locked = o.runtime_ceval_gil + o.gil_locked;
  }
  l.tstate_next = o.tstate_next;
  l.frame_previous = o.frame_previous;
  l.frame_code = o.frame_code;
  l.code_filename = o.code_filename;
  l.code_name = o.code_name;
  l.code_linetable = o.code_linetable;  // co_lnotab in 3.9
  l.code_firstlineno = o.code_firstlineno;
  l.unicode_length = o.ascii_length;
  l.unicode_state = o.ascii_state;
  l.ascii_size = o.ascii_size;
  l.compact_size = o.compact_size;
  l.bytes_size = o.bytes_ob_size;
  l.bytes_data = o.bytes_ob_sval;
  if (o.tstate_frame != CPythonOffsets::kAbsent) {
    // 3.9/3.10: PyFrameObjects from tstate->frame through f_back; the thread only as a pthread_t.
    l.tstate_pthread = o.tstate_thread_id;
    l.tstate_frame = o.tstate_frame;
    l.frame_trace = o.frame_trace;  // 3.9 only: 3.10's f_lineno holds while non-zero
    l.frame_lasti = o.frame_lasti;
    l.frame_lineno = o.frame_lineno;
    l.lasti_unit = minor == 9 ? 1 : 2;  // 3.10 counts instructions
    l.line_table = minor == 9 ? PythonLayout::LineTable::Lnotab : PythonLayout::LineTable::Linetable310;
    l.code_qualname = o.code_name;  // no co_qualname before 3.11
    return l;
  }
  // 3.11/3.12: _PyInterpreterFrames from tstate->cframe->current_frame.
  l.tstate_native_thread_id = o.tstate_native_thread_id;
  l.tstate_cframe = o.tstate_cframe;
  l.cframe_current_frame = o.cframe_current_frame;
  l.frame_instr = o.frame_prev_instr;
  l.frame_owner = o.frame_owner;
  l.frame_is_entry = o.frame_is_entry;  // 3.11; 3.12 marks an entry with a C-stack shim frame
  l.code_qualname = o.code_qualname;
  l.code_adaptive = o.code_code_adaptive;
  return l;
}

std::optional<PythonLayout> layout_from_debug_offsets(const std::string& bytes, int minor, std::string& why) {
  PyDebugOffsets313 offsets;
  if (bytes.size() < sizeof offsets || std::memcmp(bytes.data(), "xdebugpy", sizeof offsets.cookie) != 0) {
    why = "_PyRuntime does not start with the _Py_DebugOffsets cookie";
    return std::nullopt;
  }
  std::memcpy(&offsets, bytes.data(), sizeof offsets);
  if (offsets.free_threaded != 0) {
    why = "a free-threaded build (its frames are not read)";
    return std::nullopt;
  }
  auto value = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  const auto& interp = offsets.interpreter_state;
  const auto& tstate = offsets.thread_state;
  const auto& frame = offsets.interpreter_frame;
  const auto& code = offsets.code_object;
  PythonLayout l;
  l.minor = minor;
  l.runtime_interpreters_head = value(offsets.runtime_state.interpreters_head);
  l.interp_next = value(interp.next);
  l.interp_threads_head = value(interp.threads_head);
  l.gil_base = PythonLayout::GilBase::Interpreter;
  l.gil_locked = value(interp.gil_runtime_state_locked);
  l.gil_holder = value(interp.gil_runtime_state_holder);
  l.tstate_next = value(tstate.next);
  l.tstate_current_frame = value(tstate.current_frame);
  l.tstate_native_thread_id = value(tstate.native_thread_id);
  l.frame_previous = value(frame.previous);
  l.frame_code = value(frame.executable);
  l.frame_instr = value(frame.instr_ptr);
  l.frame_owner = value(frame.owner);
  l.instr_is_next = true;
  l.code_filename = value(code.filename);
  l.code_name = value(code.name);
  l.code_qualname = value(code.qualname);
  l.code_linetable = value(code.linetable);
  l.code_firstlineno = value(code.firstlineno);
  l.code_adaptive = value(code.co_code_adaptive);
  l.bytes_size = value(offsets.bytes_object.ob_size);
  l.bytes_data = value(offsets.bytes_object.ob_sval);
  l.unicode_state = value(offsets.unicode_object.state);
  l.unicode_length = value(offsets.unicode_object.length);
  l.ascii_size = value(offsets.unicode_object.asciiobject_size);
  l.compact_size = l.ascii_size + kCompactUnicodeExtra313;
  return l;
}

}  // namespace hangbench::diagnose
