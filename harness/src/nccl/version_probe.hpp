// Finds the version an NCCL library reports: ncclGetVersion() through dlopen
// in a throwaway child process, or the "NCCL version X.Y.Z" string it embeds.
#pragma once

#include <optional>
#include <string>

namespace hangbench::nccl {

struct NcclVersion {
  int code = 0;      // ncclGetVersion's encoding, e.g. 21701
  std::string text;  // "2.17.1"
  int ordinal = 0;   // X*10000+Y*100+Z whatever the encoding, for comparisons
};

// Decodes both encodings: X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z after.
NcclVersion decode_version_code(int code);
// dlopen + ncclGetVersion in a forked child (so constructors of a foreign
// library cannot touch this process and a hang costs at most `timeout_s`).
std::optional<NcclVersion> version_by_dlopen(const std::string& path, int timeout_s = 20);
// Parses the first "NCCL version X.Y.Z" in `rodata`.
std::optional<NcclVersion> version_from_string(const std::string& rodata);

}  // namespace hangbench::nccl
