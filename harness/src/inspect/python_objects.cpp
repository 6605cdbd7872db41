// The offsets python_thread_name() follows from a Thread object to its "_name", per
// CPython minor version (LP64). Typed here, not generated: 3.9's and 3.10's dict keys
// (Objects/dict-common.h) are not in any installed header, so gen_python_layouts.py
// cannot measure them. Each value below was measured with offsetof()/sizeof() under
// gcc -DPy_BUILD_CORE over the headers of 3.9.2 (.cache/old-pythons/3.9), 3.11.2
// (/usr/include/python3.11) and 3.13.5 (.cache/old-pythons/3.13), or, where marked, read
// from the struct definitions of that version's source; the diagnose test
// DiagnosePythonLive.ThreadingNameBesideTheOSName reads "loader-7" live under every
// Python at hand.
#include <cstdint>
#include <optional>

#include "inspect/python_layout.hpp"

namespace hangbench::diagnose {

std::optional<PythonObjectLayout> python_object_layout(int major, int minor) {
  using D = PythonObjectLayout::InstanceDict;
  PythonObjectLayout l;
  l.minor = minor;
  if (major != 3) return std::nullopt;
  switch (minor) {
    case 9:  // measured; dk_* from dict-common.h of 3.9
      l.frame_localsplus = 360;
      l.instance_dict = D::DictOffset;
      l.heaptype_cached_keys = 864;
      return l;
    case 10:  // from 3.10's frameobject.h (f_blockstack[20] of 12 bytes from 112) and dict-common.h
      l.frame_localsplus = 352;
      l.instance_dict = D::DictOffset;
      l.heaptype_cached_keys = 872;  // PyAsyncMethods gained am_send: 8 bytes more than 3.9
      return l;
    case 11:  // measured
      l.frame_localsplus = 72;
      l.instance_dict = D::Managed311;
      l.heaptype_cached_keys = 872;
      l.compact_keys = true;
      l.values_array = 0;
      return l;
    case 12:  // from 3.12's pycore_frame.h (owner at 70, as python_layouts_generated.inc has it)
      l.frame_localsplus = 72;
      l.instance_dict = D::Managed312;
      l.heaptype_cached_keys = 880;  // PyTypeObject gained tp_watched: 416 bytes
      l.compact_keys = true;
      l.values_array = 0;
      return l;
    case 13:  // measured
      l.frame_localsplus = 72;
      l.instance_dict = D::Inline313;
      l.heaptype_cached_keys = 880;
      l.compact_keys = true;
      l.values_array = 8;  // after capacity, size, embedded, valid
      return l;
    default:
      return std::nullopt;
  }
}

}  // namespace hangbench::diagnose
