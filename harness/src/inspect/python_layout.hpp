// Where CPython keeps what read_python_stacks() follows, per minor version
// (LP64: the same on x86-64 and aarch64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hangbench::diagnose {

struct PythonLayout {
  static constexpr std::int64_t kNone = -1;
  enum class GilBase { Runtime, InterpreterPointer, Interpreter };

  int minor = 0;
  std::int64_t runtime_interpreters_head = 0;
  std::int64_t interp_next = 0, interp_threads_head = 0;
  GilBase gil_base = GilBase::Runtime;
  std::int64_t gil_pointer = kNone;             // InterpreterPointer: where interp keeps the GIL's address
  std::int64_t gil_holder = 0, gil_locked = 0;  // from the GIL base
  std::int64_t tstate_next = 0, tstate_native_thread_id = 0;
  std::int64_t tstate_pthread = kNone;  // 3.9/3.10: no native id, only the pthread_t (thread_id)
  std::int64_t tstate_frame = kNone;    // 3.9/3.10: tstate->frame, PyFrameObjects linked by f_back
  std::int64_t tstate_cframe = kNone;   // 3.11/3.12: tstate->cframe->current_frame
  std::int64_t cframe_current_frame = 0;
  std::int64_t tstate_current_frame = kNone;  // 3.13: tstate->current_frame
  std::int64_t frame_code = 0, frame_previous = 0, frame_instr = 0, frame_owner = 0;
  std::int64_t frame_is_entry = kNone;  // 3.11; later versions mark an entry with a C-stack shim frame
  bool instr_is_next = false;           // 3.13: instr_ptr points past the current instruction
  // 3.9/3.10 frame objects: f_lasti (the last instruction) and the line table of that version.
  enum class LineTable { Location, Lnotab, Linetable310 };
  LineTable line_table = LineTable::Location;
  std::int64_t frame_lasti = kNone, frame_lineno = 0;
  std::int64_t frame_trace = kNone;  // 3.9: f_lineno holds only while f_trace is set (3.10: while non-zero)
  int lasti_unit = 1;                // bytes per f_lasti step (3.10 counts instructions)
  // 3.9/3.10 have no co_qualname: code_qualname is co_name's offset, code_linetable co_lnotab's in 3.9.
  std::int64_t code_filename = 0, code_name = 0, code_qualname = 0, code_linetable = 0, code_firstlineno = 0,
               code_adaptive = 0;
  std::int64_t unicode_length = 0, unicode_state = 0, ascii_size = 0, compact_size = 0;
  std::int64_t bytes_size = 0, bytes_data = 0;
  static constexpr int kOwnedByCStack = 3;  // 3.12+: the shim frame each _PyEval_EvalFrameDefault call pushes
};

// The fixed layouts (3.9 to 3.12, python_layouts_generated.inc's rows); nullopt for other versions.
std::optional<PythonLayout> fixed_python_layout(int major, int minor);
// 3.13: from the _Py_DebugOffsets at the start of _PyRuntime (`bytes` read from
// there, at least kDebugOffsetsBytes); nullopt with `why` filled when they are not what 3.13 writes.
std::optional<PythonLayout> layout_from_debug_offsets(const std::string& bytes, int minor, std::string& why);
// How many bytes of _PyRuntime layout_from_debug_offsets() reads: sizeof 3.13's _Py_DebugOffsets.
extern const std::size_t kDebugOffsetsBytes;

}  // namespace hangbench::diagnose

namespace hangbench::diagnose {

// Where a threading.Thread keeps its name: the Thread is `self`, the first local of
// the frame of Thread._bootstrap_inner at the bottom of each thread that threading
// started, and its name is the "_name" entry of its instance dict. The offsets that
// every version shares are constants (python_objects.cpp says where each comes from).
struct PythonObjectLayout {
  // How an instance finds its attributes: tp_dictoffset (3.9, 3.10); a managed dict or
  // values array before the object (3.11: dict at -3 pointers, values at -4; 3.12: one
  // tagged pointer at -3); 3.13: the values inline after tp_basicsize, or a dict at -3.
  enum class InstanceDict { DictOffset, Managed311, Managed312, Inline313 };
  int minor = 0;
  std::int64_t frame_localsplus = 0;  // PyFrameObject.f_localsplus / _PyInterpreterFrame.localsplus
  InstanceDict instance_dict = InstanceDict::DictOffset;
  std::int64_t heaptype_cached_keys = 0;  // PyHeapTypeObject.ht_cached_keys: a split dict's keys
  bool compact_keys = false;              // 3.11+: dk_log2_size, dk_kind; before: dk_size, dk_lookup
  std::int64_t values_array = 0;          // PyDictValues.values
};

// 3.9 to 3.13; nullopt for other versions (their threads keep only the OS name).
std::optional<PythonObjectLayout> python_object_layout(int major, int minor);

}  // namespace hangbench::diagnose
