// Offsets of 3.9, 3.10 and 3.11 come from offsetof() over the internal headers of
// 3.9.2 (Debian bullseye), 3.10.4 and 3.10.12 (Ubuntu jammy; the same) and 3.11.7;
// those of 3.12 from its struct definitions (pycore_runtime.h, pycore_interp.h,
// cpython/pystate.h, pycore_frame.h, cpython/code.h); 3.13 publishes its own.
#include "diagnose/python_layout.hpp"

#include <cstring>

namespace hangbench::diagnose {

std::optional<PythonLayout> fixed_python_layout(int major, int minor) {
  if (major != 3) return std::nullopt;
  PythonLayout l;
  l.minor = minor;
  if (minor == 9 || minor == 10) {
    l.runtime_interpreters_head = 32;
    l.interp_next = 0;
    l.interp_threads_head = 8;
    l.gil_base = PythonLayout::GilBase::Runtime;  // _PyRuntime.ceval.gil
    l.gil_holder = 360;
    l.gil_locked = 368;
    l.tstate_next = 8;
    l.tstate_pthread = 176;
    l.tstate_frame = 24;
    l.frame_previous = 24;  // f_back
    l.frame_code = 32;
    l.frame_trace = minor == 9 ? 80 : PythonLayout::kNone;
    l.frame_lasti = minor == 9 ? 104 : 96;
    l.frame_lineno = minor == 9 ? 108 : 100;
    l.lasti_unit = minor == 9 ? 1 : 2;
    l.line_table = minor == 9 ? PythonLayout::LineTable::Lnotab : PythonLayout::LineTable::Linetable310;
    l.code_firstlineno = 40;
    l.code_filename = 104;
    l.code_name = 112;
    l.code_qualname = 112;
    l.code_linetable = 120;  // co_lnotab in 3.9
    l.ascii_size = 48;
    l.compact_size = 72;
    return l;
  }
  if (minor == 11) {
    l.runtime_interpreters_head = 40;
    l.interp_next = 0;
    l.interp_threads_head = 16;
    l.gil_base = PythonLayout::GilBase::Runtime;  // _PyRuntime.ceval.gil
    l.gil_holder = 368;
    l.gil_locked = 376;
    l.tstate_next = 8;
    l.tstate_native_thread_id = 160;
    l.tstate_cframe = 56;
    l.cframe_current_frame = 8;
    l.frame_code = 32;
    l.frame_previous = 48;
    l.frame_instr = 56;
    l.frame_owner = 69;
    l.frame_is_entry = 68;
    l.code_filename = 112;
    l.code_name = 120;
    l.code_qualname = 128;
    l.code_linetable = 136;
    l.code_firstlineno = 72;
    l.code_adaptive = 184;
    l.ascii_size = 48;  // PyASCIIObject still has wstr
    l.compact_size = 72;
    return l;
  }
  if (minor == 12) {
    l.runtime_interpreters_head = 40;
    l.interp_next = 0;
    l.interp_threads_head = 72;
    l.gil_base = PythonLayout::GilBase::InterpreterPointer;  // interp->ceval.gil
    l.gil_pointer = 384;
    l.gil_holder = 8;
    l.gil_locked = 16;
    l.tstate_next = 8;
    l.tstate_native_thread_id = 144;
    l.tstate_cframe = 56;
    l.cframe_current_frame = 0;
    l.frame_code = 0;
    l.frame_previous = 8;
    l.frame_instr = 56;
    l.frame_owner = 70;
    l.code_filename = 112;
    l.code_name = 120;
    l.code_qualname = 128;
    l.code_linetable = 136;
    l.code_firstlineno = 68;
    l.code_adaptive = 192;
    l.ascii_size = 40;
    l.compact_size = 56;
    return l;
  }
  return std::nullopt;
}

std::optional<PythonLayout> layout_from_debug_offsets(const std::string& bytes, int minor, std::string& why) {
  if (bytes.size() < kDebugOffsetsBytes || std::memcmp(bytes.data(), "xdebugpy", 8) != 0) {
    why = "_PyRuntime does not start with the _Py_DebugOffsets cookie";
    return std::nullopt;
  }
  auto at = [&](std::size_t offset) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return static_cast<std::int64_t>(v);
  };
  if (at(16) != 0) {
    why = "a free-threaded build (its frames are not read)";
    return std::nullopt;
  }
  // Field order of _Py_DebugOffsets in 3.13: every member is a uint64_t, each group starts with its size.
  PythonLayout l;
  l.minor = minor;
  l.runtime_interpreters_head = at(40);
  l.interp_next = at(64);
  l.interp_threads_head = at(72);
  l.gil_base = PythonLayout::GilBase::Interpreter;
  l.gil_locked = at(136);
  l.gil_holder = at(144);
  l.tstate_next = at(168);
  l.tstate_current_frame = at(184);
  l.tstate_native_thread_id = at(200);
  l.frame_previous = at(232);
  l.frame_code = at(240);
  l.frame_instr = at(248);
  l.frame_owner = at(264);
  l.instr_is_next = true;
  l.code_filename = at(280);
  l.code_name = at(288);
  l.code_qualname = at(296);
  l.code_linetable = at(304);
  l.code_firstlineno = at(312);
  l.code_adaptive = at(344);
  l.bytes_size = at(520);
  l.bytes_data = at(528);
  l.unicode_state = at(544);
  l.unicode_length = at(552);
  l.ascii_size = at(560);
  l.compact_size = l.ascii_size + 16;  // utf8_length, utf8
  return l;
}

}  // namespace hangbench::diagnose
