// Fatbin containers in .nv_fatbin and __nv_relfatbin, read header by header
// with pread (the sections are 100+ MB; only headers and a few payload bytes
// are read). Layout (facts.md): container header u32 magic 0xBA55ED50, u16
// version, u16 header size, u64 payload size; entries u16 kind (1 PTX, 2 ELF),
// u16, u32 header size, u64 payload size, the architecture as u32 at byte 28.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "hangbench/nccl_fatbin.hpp"
#include "nccl/elf_image.hpp"
#include "nccl/sha256.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {
namespace {

constexpr uint32_t kContainerMagic = 0xBA55ED50;
constexpr uint32_t kMinEntryHeader = 32;  // up to and including the architecture word

class File {
 public:
  File(const std::string& path, int flags) : path_(path), fd_(::open(path.c_str(), flags | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  // False when the file ends before `size` bytes.
  bool read_at(uint64_t offset, void* buffer, size_t size) const {
    return ::pread(fd_, buffer, size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
  }
  void zero(uint64_t offset, uint64_t size) const {
    static const std::vector<char> kZeros(1 << 20, 0);
    while (size > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, kZeros.size()));
      const ssize_t n = ::pwrite(fd_, kZeros.data(), chunk, static_cast<off_t>(offset));
      if (n <= 0) throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
      offset += static_cast<uint64_t>(n), size -= static_cast<uint64_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_;
};

template <typename T>
T load(const unsigned char* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

FatbinSection read_section(const File& file, const ElfImage& elf, const std::string& name) {
  FatbinSection section;
  section.name = name;
  const auto span = elf.section_span(name);
  if (!span || !span->has_file_bytes) return section;
  section.present = true;
  section.offset = span->offset, section.size = span->size;
  const uint64_t end = span->offset + span->size;
  uint64_t pos = span->offset;
  while (pos + 16 <= end) {
    unsigned char header[16];
    if (!file.read_at(pos, header, sizeof header)) {
      section.problem = fmt::format("file ends inside the section at offset {}", pos - span->offset);
      break;
    }
    if (load<uint32_t>(header) != kContainerMagic) {
      // Containers are 8-byte aligned: zero padding may sit between them.
      if (load<uint64_t>(header) == 0) {
        pos += 8;
        continue;
      }
      section.problem = fmt::format("no fatbin container magic at section offset {}", pos - span->offset);
      break;
    }
    const uint16_t header_size = load<uint16_t>(header + 6);
    const uint64_t payload_size = load<uint64_t>(header + 8);
    const uint64_t first = pos + header_size, last = first + payload_size;
    if (header_size < 16 || last > end || last < first) {
      section.problem = fmt::format("container at section offset {} runs past the section", pos - span->offset);
      break;
    }
    const size_t container = section.containers++;
    for (uint64_t at = first; at < last;) {
      unsigned char entry_header[kMinEntryHeader];
      if (at + kMinEntryHeader > last || !file.read_at(at, entry_header, sizeof entry_header)) {
        section.problem = fmt::format("truncated entry header at section offset {}", at - span->offset);
        break;
      }
      FatbinEntry e;
      e.container = container;
      e.header_offset = at;
      e.header_size = load<uint32_t>(entry_header + 4);
      e.payload_size = load<uint64_t>(entry_header + 8);
      e.payload_offset = at + e.header_size;
      const uint16_t kind = load<uint16_t>(entry_header);
      e.kind = kind == 1 ? FatbinEntryKind::Ptx : kind == 2 ? FatbinEntryKind::Sass : FatbinEntryKind::Other;
      e.arch = load<uint32_t>(entry_header + 28);
      if (e.header_size < kMinEntryHeader || e.payload_offset + e.payload_size > last) {
        section.problem = fmt::format("entry at section offset {} runs past its container", at - span->offset);
        break;
      }
      unsigned char head[8] = {0};
      const size_t probe = static_cast<size_t>(std::min<uint64_t>(sizeof head, e.payload_size));
      e.zeroed = e.payload_size > 0 && file.read_at(e.payload_offset, head, probe) &&
                 std::all_of(head, head + probe, [](unsigned char c) { return c == 0; });
      section.entries.push_back(e);
      at = e.payload_offset + e.payload_size;
    }
    if (!section.problem.empty()) break;
    pos = last;
  }
  return section;
}

std::vector<uint32_t> archs_of(const FatbinSection& section, FatbinEntryKind kind, bool zeroed) {
  std::set<uint32_t> archs;
  for (const FatbinEntry& e : section.entries)
    if (e.kind == kind && e.zeroed == zeroed) archs.insert(e.arch);
  return {archs.begin(), archs.end()};
}

std::vector<uint32_t> live_archs(const FatbinSection& section, FatbinEntryKind kind) {
  return archs_of(section, kind, false);
}

// SASS runs on GPUs of its major version with an equal or higher minor.
bool sass_runs_on(uint32_t arch, uint32_t sm) { return arch / 10 == sm / 10 && arch <= sm; }

// The entry of one container the driver loads on `sm`: exact or compatible
// SASS (the highest), else the highest PTX it can compile. nullptr if none.
const FatbinEntry* loaded_entry(const std::vector<const FatbinEntry*>& container, uint32_t sm) {
  const FatbinEntry* best_sass = nullptr;
  const FatbinEntry* best_ptx = nullptr;
  for (const FatbinEntry* e : container) {
    if (e->zeroed) continue;
    if (e->kind == FatbinEntryKind::Sass && sass_runs_on(e->arch, sm) && (!best_sass || e->arch > best_sass->arch))
      best_sass = e;
    if (e->kind == FatbinEntryKind::Ptx && e->arch <= sm && (!best_ptx || e->arch > best_ptx->arch)) best_ptx = e;
  }
  return best_sass ? best_sass : best_ptx;
}

std::map<size_t, std::vector<const FatbinEntry*>> by_container(const FatbinSection& section) {
  std::map<size_t, std::vector<const FatbinEntry*>> containers;
  for (const FatbinEntry& e : section.entries) containers[e.container].push_back(&e);
  return containers;
}

std::string arch_list(const std::vector<uint32_t>& archs, const char* prefix) {
  std::vector<std::string> names;
  for (uint32_t a : archs) names.push_back(fmt::format("{}{}", prefix, a));
  return fmt::format("{}", fmt::join(names, " "));
}

nlohmann::json section_json(const FatbinSection& s) {
  uint64_t sass_bytes = 0, ptx_bytes = 0;
  size_t zeroed = 0;
  for (const FatbinEntry& e : s.entries) {
    if (e.zeroed)
      ++zeroed;
    else if (e.kind == FatbinEntryKind::Sass)
      sass_bytes += e.payload_size;
    else if (e.kind == FatbinEntryKind::Ptx)
      ptx_bytes += e.payload_size;
  }
  return {{"present", s.present},          {"offset", s.offset},          {"size", s.size},
          {"containers", s.containers},    {"entries", s.entries.size()}, {"zeroed_entries", zeroed},
          {"live_sass_bytes", sass_bytes}, {"live_ptx_bytes", ptx_bytes}, {"problem", s.problem}};
}

}  // namespace

FatbinSummary read_fatbin(const std::string& path) {
  ElfImage elf(path);  // std::invalid_argument when not ELF
  File file(path, O_RDONLY);
  FatbinSummary summary;
  summary.fatbin = read_section(file, elf, ".nv_fatbin");
  summary.relfatbin = read_section(file, elf, "__nv_relfatbin");
  summary.sass_archs = live_archs(summary.fatbin, FatbinEntryKind::Sass);
  summary.ptx_archs = live_archs(summary.fatbin, FatbinEntryKind::Ptx);
  summary.relfatbin_ptx_archs = live_archs(summary.relfatbin, FatbinEntryKind::Ptx);
  for (const auto* s : {&summary.fatbin, &summary.relfatbin})
    summary.zeroed_entries += static_cast<size_t>(
        std::count_if(s->entries.begin(), s->entries.end(), [](const FatbinEntry& e) { return e.zeroed; }));
  return summary;
}

std::string to_string(RunsOn r) {
  switch (r) {
    case RunsOn::Yes:
      return "yes";
    case RunsOn::No:
      return "no";
    case RunsOn::Unknown:
      return "unknown";
  }
  return "unknown";
}

ArchReading runs_on(const FatbinSummary& summary, uint32_t sm) {
  ArchReading reading;
  reading.sm = sm;
  const FatbinSection& fatbin = summary.fatbin;
  if (!fatbin.present) {
    reading.reason = "no .nv_fatbin section: no device code to judge";
    return reading;
  }
  if (!fatbin.problem.empty()) {
    reading.reason = ".nv_fatbin could not be read to the end: " + fatbin.problem;
    return reading;
  }
  const auto containers = by_container(fatbin);
  // A container whose every entry is for a newer GPU (NCCL 2.27+ has modules with sm_100/sm_120
  // code only) is a module that GPU never loads, not missing code.
  size_t without = 0, by_sass = 0, newer_only = 0;
  std::set<uint32_t> newer_archs;
  for (const auto& [index, entries] : containers) {
    const FatbinEntry* e = loaded_entry(entries, sm);
    // Judged by the headers, zeroed or not: a slimmed copy reads as its original does.
    const bool all_newer =
        std::all_of(entries.begin(), entries.end(), [&](const FatbinEntry* x) { return x->arch > sm; });
    if (!e && all_newer) {
      ++newer_only;
      for (const FatbinEntry* x : entries) newer_archs.insert(x->arch);
    } else if (!e) {
      ++without;
    } else if (e->kind == FatbinEntryKind::Sass) {
      ++by_sass;
    }
  }
  const size_t for_this_gpu = containers.size() - newer_only;
  const std::string newer_note =
      newer_only == 0
          ? ""
          : fmt::format("; {} of {} containers hold code only for newer GPUs ({}), never loaded here", newer_only,
                        containers.size(), arch_list({newer_archs.begin(), newer_archs.end()}, "sm_"));
  const std::string held = fmt::format(
      ".nv_fatbin holds {}{}",
      summary.sass_archs.empty() ? "no SASS" : "SASS for " + arch_list(summary.sass_archs, "sm_"),
      summary.ptx_archs.empty() ? " and no PTX" : " and PTX for " + arch_list(summary.ptx_archs, "compute_"));
  if (containers.empty()) {
    reading.runs = RunsOn::No;
    reading.reason = fmt::format("no code for sm_{}: .nv_fatbin holds no entries", sm);
  } else if (for_this_gpu == 0) {
    reading.runs = RunsOn::No;
    reading.reason = fmt::format("no code for sm_{}: {}{}", sm, held, newer_note);
  } else if (without > 0) {
    reading.runs = RunsOn::No;
    reading.reason = fmt::format("no code for sm_{}: {}", sm, held);
    if (without < containers.size())
      reading.reason += fmt::format(" ({} of {} fatbin containers have none)", without, containers.size());
    if (!summary.relfatbin_ptx_archs.empty())
      reading.reason += fmt::format("; PTX for {} only in __nv_relfatbin, which is not loaded at run time",
                                    arch_list(summary.relfatbin_ptx_archs, "compute_"));
    const auto zeroed_sass = archs_of(fatbin, FatbinEntryKind::Sass, true);
    const auto zeroed_ptx = archs_of(fatbin, FatbinEntryKind::Ptx, true);
    if (!zeroed_sass.empty() || !zeroed_ptx.empty())
      reading.reason += fmt::format("; slimmed for transport, its zeroed .nv_fatbin entries held {}{}{}",
                                    zeroed_sass.empty() ? "" : "SASS for " + arch_list(zeroed_sass, "sm_"),
                                    zeroed_sass.empty() || zeroed_ptx.empty() ? "" : " and ",
                                    zeroed_ptx.empty() ? "" : "PTX for " + arch_list(zeroed_ptx, "compute_"));
  } else {
    reading.runs = RunsOn::Yes;
    const bool exact = std::count(summary.sass_archs.begin(), summary.sass_archs.end(), sm) > 0;
    reading.reason = by_sass == for_this_gpu
                         ? (exact ? fmt::format("SASS for sm_{}", sm) : fmt::format("compatible SASS ({})", held))
                         : fmt::format("{} of {} containers by PTX compiled at load ({})", for_this_gpu - by_sass,
                                       for_this_gpu, held);
    reading.reason += newer_note;
  }
  return reading;
}

std::string describe(const ArchReading& reading) {
  return fmt::format("runs on sm_{}: {} ({})", reading.sm, to_string(reading.runs), reading.reason);
}

SlimResult slim_library(const std::string& library, const std::string& output, uint32_t keep_sm) {
  std::error_code ec;
  if (fs::exists(output) && fs::equivalent(library, output, ec))
    throw std::invalid_argument("the slimmed copy must not overwrite the library itself: " + output);
  const FatbinSummary summary = read_fatbin(library);
  if (!summary.fatbin.present && !summary.relfatbin.present)
    throw std::invalid_argument(library + ": no .nv_fatbin or __nv_relfatbin section: nothing to slim");
  for (const auto* s : {&summary.fatbin, &summary.relfatbin})
    if (!s->problem.empty())
      throw std::invalid_argument(
          fmt::format("{}: {} is not a sequence of fatbin containers ({}): not slimmed", library, s->name, s->problem));
  SlimResult result;
  result.library = library, result.output = output, result.kept_sm = keep_sm;
  result.original_sha256 = sha256_file_hex(library);
  result.file_size = fs::file_size(library);

  std::vector<const FatbinEntry*> zero;
  for (const auto& [index, entries] : by_container(summary.fatbin)) {
    std::vector<const FatbinEntry*> keep;
    for (const FatbinEntry* e : entries)
      if (e->kind == FatbinEntryKind::Sass && e->arch == keep_sm && !e->zeroed) keep.push_back(e);
    if (keep.empty()) {
      // Keep what the driver would load instead, so slimming never changes the code that runs on keep_sm.
      if (const FatbinEntry* e = loaded_entry(entries, keep_sm)) {
        keep.push_back(e);
        result.notes.push_back(fmt::format(".nv_fatbin container {} has no SASS for sm_{}: its {} for {}_{} kept",
                                           index, keep_sm, e->kind == FatbinEntryKind::Sass ? "SASS" : "PTX",
                                           e->kind == FatbinEntryKind::Sass ? "sm" : "compute", e->arch));
      }
    }
    for (const FatbinEntry* e : entries) {
      if (std::find(keep.begin(), keep.end(), e) != keep.end()) {
        ++result.kept_entries, result.kept_bytes += e->payload_size;
      } else {
        zero.push_back(e);
      }
    }
  }
  for (const FatbinEntry& e : summary.relfatbin.entries) zero.push_back(&e);
  if (result.kept_entries == 0)
    result.notes.push_back(
        fmt::format("no .nv_fatbin entry runs on sm_{}: the slimmed copy lacks code for that GPU "
                    "as the original does ({})",
                    keep_sm, runs_on(summary, keep_sm).reason));

  const fs::path tmp = output + ".partial";
  // `--out slim/libnccl.so.2` into a folder not made yet: made, as `nccl fetch` makes its cache.
  if (tmp.has_parent_path()) fs::create_directories(tmp.parent_path());
  fs::copy_file(library, tmp, fs::copy_options::overwrite_existing);
  {
    File out(tmp.string(), O_WRONLY);
    for (const FatbinEntry* e : zero) {
      out.zero(e->payload_offset, e->payload_size);
      ++result.zeroed_entries, result.zeroed_bytes += e->payload_size;
    }
  }
  fs::rename(tmp, output);
  result.slimmed_sha256 = sha256_file_hex(output);
  return result;
}

nlohmann::json to_json(const FatbinSummary& summary) {
  return {{"nv_fatbin", section_json(summary.fatbin)},
          {"nv_relfatbin", section_json(summary.relfatbin)},
          {"sass_archs", summary.sass_archs},
          {"ptx_archs", summary.ptx_archs},
          {"relfatbin_ptx_archs", summary.relfatbin_ptx_archs},
          {"relfatbin_has_ptx", !summary.relfatbin_ptx_archs.empty()},
          {"zeroed_entries", summary.zeroed_entries}};
}

nlohmann::json to_json(const ArchReading& reading) {
  return {{"sm", reading.sm}, {"runs", to_string(reading.runs)}, {"reason", reading.reason}};
}

nlohmann::json to_json(const SlimResult& r) {
  return {{"schema", "hangbench.nccl-slim/1"},
          {"library", r.library},
          {"output", r.output},
          {"original_sha256", r.original_sha256},
          {"slimmed_sha256", r.slimmed_sha256},
          {"file_size", r.file_size},
          {"kept_sm", r.kept_sm},
          {"kept_entries", r.kept_entries},
          {"kept_bytes", r.kept_bytes},
          {"zeroed_entries", r.zeroed_entries},
          {"zeroed_bytes", r.zeroed_bytes},
          {"notes", r.notes}};
}

}  // namespace hangbench::nccl
