// hangbench::nccl::inspect: is the teardown fix (shutdown() in
// ncclSocketClose, NCCL 2.18.1) present in a given libnccl.so?
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "hangbench/nccl_inspect.hpp"
#include "nccl/elf_image.hpp"
#include "nccl/sha256.hpp"
#include "nccl/version_probe.hpp"

namespace hangbench::nccl {
namespace {

// Releases whose proxy service loop waits for peers after an abort but whose
// ncclSocketClose only closes (facts.md, read from the tagged sources).
constexpr int kFirstHangingRelease = 21602;  // 2.16.2
constexpr int kLastHangingRelease = 21701;   // 2.17.1
constexpr int kFirstFixedRelease = 21801;    // 2.18.1

bool defines(const ElfImage& elf, const std::string& name) {
  const auto& syms = elf.dynamic_symbols();
  return std::any_of(syms.begin(), syms.end(), [&](const ElfSymbol& s) { return s.defined && s.name == name; });
}

bool imports(const ElfImage& elf, const std::string& name) {
  const auto& syms = elf.dynamic_symbols();
  return std::any_of(syms.begin(), syms.end(), [&](const ElfSymbol& s) { return !s.defined && s.name == name; });
}

// Linear sweep over the function's bytes for direct calls/jumps to a PLT stub
// (e8/e9 rel32) and indirect ones through the GOT slot (ff 15 / ff 25 disp32).
bool code_calls(const std::vector<unsigned char>& code, uint64_t code_address, const std::vector<uint64_t>& plt_stubs,
                const std::vector<uint64_t>& got_slots) {
  auto contains = [](const std::vector<uint64_t>& v, uint64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    int32_t rel;
    if (code[i] == 0xe8 || code[i] == 0xe9) {
      std::memcpy(&rel, &code[i + 1], 4);
      if (contains(plt_stubs, code_address + i + 5 + static_cast<int64_t>(rel))) return true;
    }
    if (i + 6 <= code.size() && code[i] == 0xff && (code[i + 1] == 0x15 || code[i + 1] == 0x25)) {
      std::memcpy(&rel, &code[i + 2], 4);
      if (contains(got_slots, code_address + i + 6 + static_cast<int64_t>(rel))) return true;
    }
  }
  return false;
}

void find_version(const ElfImage& elf, bool try_dlopen, InspectResult& r) {
  if (try_dlopen) {
    if (auto v = version_by_dlopen(r.path)) {
      r.version = v->text, r.version_code = v->code, r.loaded = true;
      r.reasons.push_back(fmt::format("version {} from ncclGetVersion() ({}) through dlopen", v->text, v->code));
      return;
    }
  }
  if (auto v = version_from_string(elf.section_contents(".rodata"))) {
    r.version = v->text, r.version_code = v->code;
    r.reasons.push_back(fmt::format("version {} from the \"NCCL version\" string in .rodata{}", v->text,
                                    try_dlopen ? " (dlopen or ncclGetVersion failed)" : ""));
    return;
  }
  r.reasons.push_back("version unknown: not loadable here and no \"NCCL version\" string");
}

void find_shutdown_call(const ElfImage& elf, InspectResult& r) {
  const auto socket_close = elf.find_function("ncclSocketClose");
  r.has_symbols = socket_close.has_value();
  if (!socket_close) {
    r.reasons.push_back(elf.has_symtab() ? "ncclSocketClose is not in .symtab or .dynsym (renamed or inlined?)"
                                         : "no .symtab (stripped) and ncclSocketClose is not exported: "
                                           "its code cannot be located");
    return;
  }
  if (!r.imports_shutdown) {
    r.socket_close_calls_shutdown = 0;
    r.reasons.push_back("ncclSocketClose found, but the library imports no shutdown to call");
    return;
  }
  if (!elf.is_x86_64()) {
    r.reasons.push_back("ncclSocketClose found, but call scanning is implemented for x86-64 only");
    return;
  }
  const auto got_slots = elf.got_slots_for("shutdown");
  const auto plt_stubs = elf.plt_stubs_for(got_slots);
  const auto code = elf.bytes_at(socket_close->address, socket_close->size);
  if (code.empty()) {
    r.reasons.push_back("ncclSocketClose found, but its bytes are not in the file");
    return;
  }
  const bool calls = code_calls(code, socket_close->address, plt_stubs, got_slots);
  r.socket_close_calls_shutdown = calls ? 1 : 0;
  r.reasons.push_back(fmt::format("ncclSocketClose (0x{:x}, {} bytes) {} shutdown (PLT stubs {}, GOT slots {})",
                                  socket_close->address, socket_close->size, calls ? "calls" : "does not call",
                                  plt_stubs.size(), got_slots.size()));
}

void decide(InspectResult& r) {
  const int ordinal = r.version.empty() ? 0 : version_from_string("NCCL version " + r.version)->ordinal;
  const bool in_hanging_range = ordinal >= kFirstHangingRelease && ordinal <= kLastHangingRelease;
  if (r.socket_close_calls_shutdown == 1) {
    r.fix = FixVerdict::Yes;
    r.reasons.push_back("fix present: ncclSocketClose shuts the socket down before closing it");
  } else if (r.socket_close_calls_shutdown == 0) {
    r.fix = FixVerdict::No;
    r.reasons.push_back(
        "fix absent: ncclSocketClose only closes, so a forked child holding the "
        "descriptor keeps the connection open");
  } else if (!r.imports_shutdown) {
    // Nothing in the library can call shutdown(); whether that matters depends on the release.
    if (in_hanging_range || ordinal >= kFirstFixedRelease) {
      r.fix = FixVerdict::No;
      r.reasons.push_back(in_hanging_range
                              ? "fix absent: shutdown is not imported at all, and releases 2.16.2 to 2.17.1 "
                                "carry the hang"
                              : "fix absent: shutdown is not imported at all, although this release calls it "
                                "by source (the fix was removed)");
    } else {
      r.fix = FixVerdict::Unknown;
      r.reasons.push_back(ordinal > 0 ? "shutdown is not imported, but releases before 2.16.2 leave the "
                                        "service loop on abort and so do not need it"
                                      : "shutdown is not imported and the version is unknown");
    }
  } else {
    r.fix = FixVerdict::Unknown;
    r.reasons.push_back(
        "the library imports shutdown but has no symbols, so whether ncclSocketClose "
        "is its caller cannot be told" +
        std::string(ordinal >= kFirstFixedRelease ? " (by source, releases from 2.18.1 on call it there)" : ""));
  }
}

}  // namespace

std::string to_string(FixVerdict v) {
  switch (v) {
    case FixVerdict::Yes:
      return "yes";
    case FixVerdict::No:
      return "no";
    case FixVerdict::Unknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

void require_nccl(const ElfImage& elf, const std::string& path) {
  if (!elf.is_shared_object()) throw std::invalid_argument(path + ": not an ELF shared library (e_type is not ET_DYN)");
  std::vector<std::string> missing;
  for (const char* api : {"ncclGetVersion", "ncclCommInitRank"})
    if (!defines(elf, api)) missing.push_back(api);
  if (!missing.empty())
    throw std::invalid_argument(
        fmt::format("{}: not an NCCL library (.dynsym does not define {})", path, fmt::join(missing, " or ")));
}

}  // namespace

void require_nccl_library(const std::string& path) { require_nccl(ElfImage(path), path); }

bool rodata_carries_string(const std::string& data, const std::string& text) {
  // Whole strings only: "CUDA_LAUNCH_BLOCKING" must not match inside a longer name.
  const std::string needle = std::string(1, '\0') + text + std::string(1, '\0');
  return data.find(needle) != std::string::npos || data.rfind(text + std::string(1, '\0'), 0) == 0;
}

bool carries_string(const std::string& path, const std::string& text) {
  ElfImage elf(path);
  require_nccl(elf, path);
  return rodata_carries_string(elf.section_contents(".rodata"), text);
}

InspectResult inspect(const std::string& path, bool try_dlopen, bool with_device_code) {
  ElfImage elf(path);  // throws std::invalid_argument for a non-ELF file
  require_nccl(elf, path);
  InspectResult r;
  r.path = path;
  r.sha256 = sha256_file_hex(path);
  find_version(elf, try_dlopen, r);
  r.imports_shutdown = imports(elf, "shutdown");
  r.reasons.push_back(r.imports_shutdown ? "imports shutdown" : "does not import shutdown");
  find_shutdown_call(elf, r);
  decide(r);
  r.rodata = elf.section_contents(".rodata");
  if (!with_device_code) return r;
  r.fatbin = read_fatbin(path);
  r.runs_on_sm90 = runs_on(r.fatbin, 90);
  return r;
}

nlohmann::json to_json(const InspectResult& r) {
  return {{"path", r.path},
          {"sha256", r.sha256},
          {"version", r.version},
          {"version_code", r.version_code},
          {"loaded", r.loaded},
          {"imports_shutdown", r.imports_shutdown},
          {"has_symbols", r.has_symbols},
          {"socket_close_calls_shutdown", r.socket_close_calls_shutdown},
          {"teardown_fix_present", to_string(r.fix)},
          // The same facts as booleans; null where the file cannot tell.
          {"fix_present",
           r.fix == FixVerdict::Unknown ? nlohmann::json(nullptr) : nlohmann::json(r.fix == FixVerdict::Yes)},
          {"calls_shutdown", r.socket_close_calls_shutdown < 0 ? nlohmann::json(nullptr)
                                                               : nlohmann::json(r.socket_close_calls_shutdown == 1)},
          {"reasons", r.reasons},
          {"fatbin", to_json(r.fatbin)},
          {"runs_on_sm90", to_json(r.runs_on_sm90)}};
}

}  // namespace hangbench::nccl
