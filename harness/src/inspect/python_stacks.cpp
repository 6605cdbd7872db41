// read_python_stacks(): find _PyRuntime, follow interpreters -> thread states ->
// frames -> code objects, and turn each frame's instruction into a line.
#include "hangbench/python_stacks.hpp"

#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <regex>

#include "inspect/pthread_tid.hpp"
#include "inspect/python_layout.hpp"
#include "inspect/remote_memory.hpp"

namespace hangbench::diagnose {

namespace {

constexpr int kMaxThreads = 4096;
constexpr int kMaxFrames = 1024;
// The same in every version 3.9 to 3.13 (LP64): PyObject.ob_type; PyTypeObject's tp_name,
// tp_basicsize, tp_flags, tp_dictoffset; PyDictObject's ma_keys, ma_values; the type flags.
constexpr std::uint64_t kObType = 8, kTypeName = 24, kTypeBasicSize = 32, kTypeFlags = 168, kTypeDictOffset = 288;
constexpr std::uint64_t kDictKeys = 32, kDictValues = 40;
constexpr std::uint64_t kInlineValues = 1u << 2, kManagedDict = 1u << 4;

struct Symbols {
  std::uint64_t runtime = 0;        // address of _PyRuntime in the process
  std::uint64_t version = 0;        // address of Py_Version (3.11+)
  std::string module;               // where they were found
  std::string python_named_module;  // a module whose name says python, for the message when no symbol is found
};

int find_in_module(Dwfl_Module* module, void** arg, const char* name, Dwarf_Addr, void* data) {
  auto& found = *static_cast<Symbols*>(data);
  std::string file = name ? name : "";
  auto slash = file.rfind('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  // The interpreter lives in the executable (python3.x) or in libpython3.x.so; an
  // embedding program links libpython. Other modules (libtorch: huge) are not searched.
  if (base.find("python") == std::string::npos) return DWARF_CB_OK;
  if (found.python_named_module.empty()) found.python_named_module = base;
  (void)arg;
  int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    const char* symbol = dwfl_module_getsym_info(module, i, &sym, &address, nullptr, nullptr, nullptr);
    if (!symbol || sym.st_shndx == SHN_UNDEF) continue;
    if (std::strcmp(symbol, "_PyRuntime") == 0)
      found.runtime = address;
    else if (std::strcmp(symbol, "Py_Version") == 0)
      found.version = address;
  }
  if (found.runtime == 0) return DWARF_CB_OK;
  found.module = base;
  return DWARF_CB_ABORT;
}

// Where _PyRuntime is, or an empty module when no mapped object defines it.
Symbols find_runtime(int pid, std::string& error) {
  Symbols found;
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                           &debuginfo_path};
  std::unique_ptr<Dwfl, decltype(&dwfl_end)> dwfl(dwfl_begin(&callbacks), &dwfl_end);
  if (!dwfl) {
    error = std::string("libdw could not start: ") + dwfl_errmsg(-1);
    return found;
  }
  dwfl_report_begin(dwfl.get());
  int reported = dwfl_linux_proc_report(dwfl.get(), pid);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (reported != 0) {
    error =
        fmt::format("its memory map could not be read ({})", reported > 0 ? std::strerror(reported) : dwfl_errmsg(-1));
    return found;
  }
  dwfl_getmodules(dwfl.get(), find_in_module, &found, 0);
  return found;
}

struct PythonMemoryReader {
  const RemoteMemory& memory;
  const PythonLayout& layout;
  std::optional<PythonObjectLayout> objects;  // nullopt: threading names are not read

  std::string bytes(std::uint64_t object) const {
    auto size = memory.value<std::int64_t>(object + layout.bytes_size).value_or(0);
    if (size <= 0 || size > (1 << 20)) return "";
    std::string out(static_cast<std::size_t>(size), '\0');
    return memory.read(object + layout.bytes_data, out.data(), out.size()) ? out : "";
  }

  // A str object as UTF-8 ("?" for what cannot be read).
  std::string text(std::uint64_t object) const {
    auto length = memory.value<std::int64_t>(object + layout.unicode_length);
    auto state = memory.value<std::uint32_t>(object + layout.unicode_state);
    if (!length || !state || *length < 0 || *length > 4096) return "?";
    unsigned kind = (*state >> 2) & 7, compact = (*state >> 5) & 1, ascii = (*state >> 6) & 1;
    if (!compact || (kind != 1 && kind != 2 && kind != 4)) return "?";
    std::uint64_t data = object + (ascii ? layout.ascii_size : layout.compact_size);
    std::string raw(static_cast<std::size_t>(*length) * kind, '\0');
    if (!memory.read(data, raw.data(), raw.size())) return "?";
    if (kind == 1 && ascii) return raw;
    std::string out;
    for (std::size_t i = 0; i < static_cast<std::size_t>(*length); ++i) {
      std::uint32_t c = 0;
      std::memcpy(&c, raw.data() + i * kind, kind);  // little-endian code units
      if (c < 0x80)
        out += static_cast<char>(c);
      else if (c < 0x800)
        out += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 63))};
      else if (c < 0x10000)
        out += {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 63)),
                static_cast<char>(0x80 | (c & 63))};
      else
        out += {static_cast<char>(0xF0 | (c >> 18)), static_cast<char>(0x80 | ((c >> 12) & 63)),
                static_cast<char>(0x80 | ((c >> 6) & 63)), static_cast<char>(0x80 | (c & 63))};
    }
    return out;
  }

  // 3.9/3.10: every PyFrameObject is run by its own _PyEval_EvalFrameDefault call, so each is an entry.
  // Thread._bootstrap_inner(self) is the bottom of every thread that threading started.
  std::uint64_t thread_self(const PythonFrame& f, std::uint64_t frame) const {
    if (!objects || f.function.size() < 16 || f.function.compare(f.function.size() - 16, 16, "_bootstrap_inner") != 0 ||
        f.file.size() < 12 || f.file.compare(f.file.size() - 12, 12, "threading.py") != 0)
      return 0;
    return memory.pointer(frame + objects->frame_localsplus);
  }

  std::vector<PythonFrame> frame_objects(std::uint64_t tstate, std::uint64_t& thread_object) const {
    std::vector<PythonFrame> out;
    std::uint64_t frame = memory.pointer(tstate + layout.tstate_frame);
    for (int depth = 0; frame && depth < kMaxFrames; ++depth, frame = memory.pointer(frame + layout.frame_previous)) {
      std::uint64_t code = memory.pointer(frame + layout.frame_code);
      if (!code) continue;
      PythonFrame f;
      f.function = text(memory.pointer(code + layout.code_qualname));
      f.file = text(memory.pointer(code + layout.code_filename));
      f.line = frame_object_line(frame, code);
      f.entry = true;
      if (std::uint64_t self = thread_self(f, frame)) thread_object = self;
      out.push_back(std::move(f));
    }
    return out;
  }

  // As PyFrame_GetLineNumber() answers: f_lineno while traced, else from f_lasti and the line table.
  int frame_object_line(std::uint64_t frame, std::uint64_t code) const {
    int lineno = memory.value<std::int32_t>(frame + layout.frame_lineno).value_or(0);
    bool traced =
        layout.frame_trace != PythonLayout::kNone ? memory.pointer(frame + layout.frame_trace) != 0 : lineno != 0;
    if (traced && lineno > 0) return lineno;
    int first_line = memory.value<std::int32_t>(code + layout.code_firstlineno).value_or(0);
    int lasti = memory.value<std::int32_t>(frame + layout.frame_lasti).value_or(-1);
    if (lasti < 0) return first_line;  // not started yet
    std::string table = bytes(memory.pointer(code + layout.code_linetable));
    int offset = lasti * layout.lasti_unit;
    if (layout.line_table == PythonLayout::LineTable::Lnotab) return line_from_lnotab(table, first_line, offset);
    return line_from_linetable_3_10(table, first_line, offset).value_or(first_line);
  }

  // The kernel's id of a thread state's thread (0 when it cannot be told).
  int thread_id(int pid, std::uint64_t tstate) const {
    if (layout.tstate_pthread == PythonLayout::kNone)
      return static_cast<int>(memory.value<std::uint64_t>(tstate + layout.tstate_native_thread_id).value_or(0));
    auto offset = pthread_tid_offset();
    std::uint64_t pthread = memory.pointer(tstate + layout.tstate_pthread);
    if (!offset || !pthread) return 0;
    int tid = memory.value<std::int32_t>(pthread + static_cast<std::uint64_t>(*offset)).value_or(0);
    // Another glibc (a container's) could keep it elsewhere: only a thread of the process counts.
    std::error_code ec;
    return tid > 0 && std::filesystem::exists(fmt::format("/proc/{}/task/{}", pid, tid), ec) ? tid : 0;
  }

  // The frames of a thread, newest first; thread_object: its threading.Thread when seen.
  std::vector<PythonFrame> frames(std::uint64_t tstate, std::uint64_t& thread_object) const {
    if (layout.tstate_frame != PythonLayout::kNone) return frame_objects(tstate, thread_object);
    std::vector<PythonFrame> out;
    std::uint64_t frame = 0;
    if (layout.tstate_current_frame != PythonLayout::kNone)
      frame = memory.pointer(tstate + layout.tstate_current_frame);
    else if (std::uint64_t cframe = memory.pointer(tstate + layout.tstate_cframe))
      frame = memory.pointer(cframe + layout.cframe_current_frame);
    for (int depth = 0; frame && depth < kMaxFrames; ++depth, frame = memory.pointer(frame + layout.frame_previous)) {
      auto owner = memory.value<std::int8_t>(frame + layout.frame_owner).value_or(0);
      if (layout.minor >= 12 && owner == PythonLayout::kOwnedByCStack) {
        if (!out.empty()) out.back().entry = true;  // the frame above a shim began an evaluator call
        continue;
      }
      std::uint64_t code = memory.pointer(frame + layout.frame_code) & ~std::uint64_t{7};  // 3.14 tags stack refs
      if (!code) continue;
      PythonFrame f;
      f.function = text(memory.pointer(code + layout.code_qualname));
      f.file = text(memory.pointer(code + layout.code_filename));
      int first_line = memory.value<std::int32_t>(code + layout.code_firstlineno).value_or(0);
      std::uint64_t instr = memory.pointer(frame + layout.frame_instr);
      std::uint64_t start = code + layout.code_adaptive;
      f.line = first_line;
      if (instr >= start) {
        int index = static_cast<int>((instr - start) / 2) - (layout.instr_is_next ? 1 : 0);
        if (auto line = line_from_location_table(bytes(memory.pointer(code + layout.code_linetable)), first_line,
                                                 index < 0 ? 0 : index))
          f.line = *line;
      }
      if (layout.frame_is_entry != PythonLayout::kNone)
        f.entry = memory.value<std::uint8_t>(frame + layout.frame_is_entry).value_or(0) != 0;
      if (std::uint64_t self = thread_self(f, frame)) thread_object = self;
      out.push_back(std::move(f));
    }
    if (!out.empty()) out.back().entry = true;
    return out;
  }

  // Whether `object`'s type is named `name` (tp_name, at the same place in every version).
  bool type_named(std::uint64_t object, const char* name) const {
    std::uint64_t type = memory.pointer(object + kObType);
    std::uint64_t tp_name = type ? memory.pointer(type + kTypeName) : 0;
    char got[8] = {};
    std::size_t want = std::strlen(name) + 1;
    return tp_name && want <= sizeof got && memory.read(tp_name, got, want) && std::memcmp(got, name, want) == 0;
  }

  // The str value of attribute `name` in the instance dict of `object` ("" when not read).
  std::string attribute_text(std::uint64_t object, const std::string& name) const {
    using D = PythonObjectLayout::InstanceDict;
    std::uint64_t type = memory.pointer(object + kObType);
    if (!type) return "";
    auto flags = memory.value<std::uint64_t>(type + kTypeFlags).value_or(0);
    std::uint64_t dict = 0, keys = 0, values = 0;  // values: the split table's values[], when there is one
    auto split = [&](std::uint64_t values_struct) {
      values = values_struct + static_cast<std::uint64_t>(objects->values_array);
      keys = memory.pointer(type + objects->heaptype_cached_keys);
    };
    switch (objects->instance_dict) {
      case D::DictOffset: {
        auto offset = memory.value<std::int64_t>(type + kTypeDictOffset).value_or(0);
        if (offset > 0) dict = memory.pointer(object + static_cast<std::uint64_t>(offset));
        break;
      }
      case D::Managed311:
        if (!(flags & kManagedDict)) return "";
        dict = memory.pointer(object - 3 * 8);
        if (!dict)
          if (std::uint64_t v = memory.pointer(object - 4 * 8)) split(v);
        break;
      case D::Managed312: {
        if (!(flags & kManagedDict)) return "";
        std::uint64_t tagged = memory.pointer(object - 3 * 8);
        if (tagged & 1)
          split(tagged - 1);
        else
          dict = tagged;
        break;
      }
      case D::Inline313:
        if (flags & kManagedDict) dict = memory.pointer(object - 3 * 8);
        if (!dict && (flags & kInlineValues)) {
          auto basic_size = memory.value<std::int64_t>(type + kTypeBasicSize).value_or(0);
          std::uint64_t v = object + static_cast<std::uint64_t>(basic_size);
          if (basic_size > 0 && memory.value<std::uint8_t>(v + 3).value_or(0)) split(v);  // `valid`
        }
        break;
    }
    if (dict) {
      keys = memory.pointer(dict + kDictKeys);
      std::uint64_t v = memory.pointer(dict + kDictValues);
      values = v ? v + static_cast<std::uint64_t>(objects->values_array) : 0;
    }
    if (!keys) return "";
    std::uint64_t entries = 0, entry_size = 24, key_at = 8, value_at = 16;
    std::int64_t count = 0;
    if (objects->compact_keys) {  // 3.11+: dk_log2_index_bytes at 9, dk_kind at 10, dk_nentries at 24
      auto index_bytes = memory.value<std::uint8_t>(keys + 9).value_or(64);
      auto kind = memory.value<std::uint8_t>(keys + 10).value_or(0);
      count = memory.value<std::int64_t>(keys + 24).value_or(0);
      if (index_bytes > 40) return "";
      entries = keys + 32 + (std::uint64_t{1} << index_bytes);
      if (kind != 0) entry_size = 16, key_at = 0, value_at = 8;  // unicode keys: no hash
    } else {  // 3.9/3.10: dk_size at 8, dk_nentries at 32, indices from 40
      auto size = memory.value<std::int64_t>(keys + 8).value_or(0);
      count = memory.value<std::int64_t>(keys + 32).value_or(0);
      if (size <= 0 || size > (1 << 20)) return "";
      std::uint64_t index_size = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
      entries = keys + 40 + static_cast<std::uint64_t>(size) * index_size;
    }
    for (std::int64_t i = 0; i < count && i < 256; ++i) {
      std::uint64_t entry = entries + static_cast<std::uint64_t>(i) * entry_size;
      std::uint64_t key = memory.pointer(entry + key_at);
      if (!key || !type_named(key, "str") || text(key) != name) continue;
      std::uint64_t value =
          values ? memory.pointer(values + static_cast<std::uint64_t>(i) * 8) : memory.pointer(entry + value_at);
      if (!value || !type_named(value, "str")) return "";
      std::string out = text(value);
      return out == "?" ? "" : out;
    }
    return "";
  }

  std::uint64_t gil_holder(std::uint64_t runtime, std::uint64_t interp) const {
    std::uint64_t base = 0;
    switch (layout.gil_base) {
      case PythonLayout::GilBase::Runtime:
        base = runtime;
        break;
      case PythonLayout::GilBase::Interpreter:
        base = interp;
        break;
      case PythonLayout::GilBase::InterpreterPointer:
        base = memory.pointer(interp + layout.gil_pointer);
        break;
    }
    if (!base || memory.value<std::int32_t>(base + layout.gil_locked).value_or(0) == 0) return 0;
    return memory.pointer(base + layout.gil_holder);
  }
};

std::string version_text(std::uint32_t hex) {
  return fmt::format("{}.{}.{}", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
}

// Before 3.11 there is no Py_Version: the executable or library says it (python3.9, libpython3.10.so.1.0).
bool version_from_module_name(const std::string& module, int& major, int& minor) {
  static const std::regex named_version(R"(python(\d)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(module, m, named_version)) return false;
  major = std::stoi(m[1].str());
  minor = std::stoi(m[2].str());
  return true;
}

}  // namespace

PythonStacks read_python_stacks(int pid) {
  PythonStacks out;
  out.attempted = true;
  std::string error;
  Symbols symbols = find_runtime(pid, error);
  if (!error.empty()) {
    out.skipped_reason = error;
    return out;
  }
  if (symbols.runtime == 0) {
    int major = 0, minor = 0;
    if (version_from_module_name(symbols.python_named_module, major, minor)) {
      out.version = fmt::format("{}.{}", major, minor);
      out.skipped_reason = fmt::format("Python {} in {}: no _PyRuntime symbol found, so only native frames",
                                       out.version, symbols.python_named_module);
    } else {
      out.skipped_reason = "not a CPython process (no _PyRuntime symbol in its executable or libraries)";
    }
    return out;
  }
  RemoteMemory memory(pid);
  int major = 0, minor = 0;
  if (symbols.version) {
    auto hex = memory.value<std::uint32_t>(symbols.version);
    if (!hex) {
      out.skipped_reason = fmt::format("its memory could not be read ({})", std::strerror(memory.last_errno()));
      return out;
    }
    out.version = version_text(*hex);
    major = static_cast<int>(*hex >> 24);
    minor = static_cast<int>((*hex >> 16) & 0xff);
  } else if (!version_from_module_name(symbols.module, major, minor)) {
    out.skipped_reason = fmt::format(
        "a Python older than 3.11 in {} (no Py_Version, and its name gives no "
        "version): only native frames",
        symbols.module);
    return out;
  } else {
    out.version = fmt::format("{}.{}", major, minor);
  }
  std::optional<PythonLayout> layout = fixed_python_layout(major, minor);
  if (!layout && major == 3 && minor == 13) {
    std::string raw(kDebugOffsetsBytes, '\0');
    std::string why = "its _Py_DebugOffsets could not be read";
    if (memory.read(symbols.runtime, raw.data(), raw.size())) layout = layout_from_debug_offsets(raw, minor, why);
    if (!layout) {
      out.skipped_reason = fmt::format("Python {}: {}; only native frames", out.version, why);
      return out;
    }
  }
  if (!layout) {
    out.skipped_reason =
        fmt::format("Python {}: no known layout (frames are read for 3.9 to 3.13); only native frames", out.version);
    return out;
  }
  PythonMemoryReader reader{memory, *layout, python_object_layout(major, minor)};
  std::uint64_t interp = memory.pointer(symbols.runtime + layout->runtime_interpreters_head);
  if (!interp) {
    out.skipped_reason = fmt::format("Python {}: no interpreter yet (or it has finalised)", out.version);
    return out;
  }
  std::uint64_t holder = reader.gil_holder(symbols.runtime, interp);
  for (int n = 0; interp && n < 64; ++n, interp = memory.pointer(interp + layout->interp_next)) {
    std::uint64_t tstate = memory.pointer(interp + layout->interp_threads_head);
    for (int i = 0; tstate && i < kMaxThreads; ++i, tstate = memory.pointer(tstate + layout->tstate_next)) {
      PythonThread t;
      t.tid = reader.thread_id(pid, tstate);
      t.holds_gil = holder != 0 && holder == tstate;
      std::uint64_t thread_object = 0;
      t.frames = reader.frames(tstate, thread_object);
      if (thread_object) t.name = reader.attribute_text(thread_object, "_name");
      if (t.holds_gil) out.gil_holder_tid = t.tid;
      out.threads.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<StackFrame> merge_python_frames(const std::vector<StackFrame>& native, const PythonThread& python) {
  // One group of Python frames per evaluator call, newest first: each ends at an entry frame.
  std::vector<std::vector<const PythonFrame*>> groups(1);
  for (const auto& f : python.frames) {
    groups.back().push_back(&f);
    if (f.entry) groups.emplace_back();
  }
  if (groups.back().empty()) groups.pop_back();
  auto python_frame = [](const PythonFrame& f) {
    StackFrame s;
    s.function = f.function;
    s.file = f.file;
    s.line = f.line;
    s.module = "python";
    s.python = true;
    return s;
  };
  std::vector<StackFrame> out;
  std::size_t next = 0;
  std::size_t last_evaluator = 0;  // index in out after the outermost evaluator's frames
  for (const auto& f : native) {
    if (f.function == "_PyEval_EvalFrameDefault" && next < groups.size()) {
      for (const auto* p : groups[next]) out.push_back(python_frame(*p));
      ++next;
      last_evaluator = out.size();
      continue;
    }
    out.push_back(f);
  }
  std::vector<StackFrame> rest;
  for (; next < groups.size(); ++next)
    for (const auto* p : groups[next]) rest.push_back(python_frame(*p));
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(last_evaluator), rest.begin(), rest.end());
  return out;
}

}  // namespace hangbench::diagnose
