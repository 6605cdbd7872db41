// The device code inside a libnccl.so: which GPU architectures its fatbin
// holds (does it run on this GPU?), and a copy slimmed for transport that
// keeps only the code one architecture loads. Owned by harness/src/nccl.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hangbench::nccl {

enum class FatbinEntryKind { Ptx = 1, Sass = 2, Other = 0 };

// One entry of a fatbin container: its header and payload in the file.
struct FatbinEntry {
  size_t container = 0;        // index of its container in the section
  uint64_t header_offset = 0;  // file offset of the entry header
  uint32_t header_size = 0;
  uint64_t payload_offset = 0, payload_size = 0;
  FatbinEntryKind kind = FatbinEntryKind::Other;
  uint32_t arch = 0;    // 90 = sm_90 (SASS) or compute_90 (PTX)
  bool zeroed = false;  // payload starts with zeros: slimmed away, not loadable code
};

struct FatbinSection {
  std::string name;
  bool present = false;
  uint64_t offset = 0, size = 0;
  size_t containers = 0;
  std::vector<FatbinEntry> entries;
  std::string problem;  // why parsing stopped early ("" = the whole section parsed)
};

struct FatbinSummary {
  FatbinSection fatbin;                         // .nv_fatbin: what the CUDA runtime loads
  FatbinSection relfatbin;                      // __nv_relfatbin: relocatable code for device linking, never loaded
  std::vector<uint32_t> sass_archs, ptx_archs;  // live entries of .nv_fatbin, ascending
  std::vector<uint32_t> relfatbin_ptx_archs;    // live PTX entries of __nv_relfatbin
  size_t zeroed_entries = 0;                    // in both sections
};

// Reads the fatbin headers (not the payloads) of an ELF file. Throws
// std::invalid_argument when `path` is not an ELF file.
FatbinSummary read_fatbin(const std::string& path);

enum class RunsOn { Yes, No, Unknown };
std::string to_string(RunsOn r);  // "yes", "no", "unknown"

struct ArchReading {
  uint32_t sm = 90;
  RunsOn runs = RunsOn::Unknown;
  std::string reason;  // e.g. "no code for sm_90: .nv_fatbin holds SASS for sm_35 ... sm_80 and no PTX"
};
// Can the CUDA driver find code for a GPU of compute capability `sm` in every
// .nv_fatbin container? SASS of the same major and a minor up to the GPU's
// runs as is; PTX of an architecture up to the GPU's is compiled at load.
ArchReading runs_on(const FatbinSummary& summary, uint32_t sm = 90);
// "runs on sm_90: yes (SASS for sm_90)".
std::string describe(const ArchReading& reading);

struct SlimResult {
  std::string library, output;
  std::string original_sha256, slimmed_sha256;
  uint64_t file_size = 0;  // the same for both
  uint32_t kept_sm = 90;
  size_t kept_entries = 0, zeroed_entries = 0;
  uint64_t kept_bytes = 0, zeroed_bytes = 0;  // payload bytes
  std::vector<std::string> notes;             // e.g. containers kept for PTX because they have no SASS for kept_sm
};

// Copies `library` to `output` with the payload of every .nv_fatbin entry
// zeroed except the code a GPU of `keep_sm` loads (its SASS; in a container
// without it, the entry the driver would pick instead), and every
// __nv_relfatbin entry zeroed. Size, layout and host code stay as they are.
// Throws std::invalid_argument (not ELF, no fatbin, output == library) or
// std::runtime_error (I/O).
SlimResult slim_library(const std::string& library, const std::string& output, uint32_t keep_sm = 90);

nlohmann::json to_json(const FatbinSummary& summary);
nlohmann::json to_json(const ArchReading& reading);
// Schema hangbench.nccl-slim/1 (docs/json-schema.md).
nlohmann::json to_json(const SlimResult& result);

}  // namespace hangbench::nccl
