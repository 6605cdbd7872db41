// A catalog entry's static check: what a library's bytes say about one known hang,
// without running it. Two kinds: shutdown() in ncclSocketClose (nccl-socket-close-alias)
// and a C string that the fixed (or the affected) releases carry in their read-only data
// (CUDA_LAUNCH_BLOCKING, which NCCL reads from 2.17.1 on). An entry whose fix leaves no
// mark in the bytes says why in its [static_check] none.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/catalog.hpp"
#include "hangbench/nccl_inspect.hpp"

namespace hangbench::validate {

// Affected / NotAffected: for an entry no release fixes (a change of behaviour that only a
// setting undoes), the bytes say whether the library carries the change, not whether it is fixed.
enum class StaticVerdict { HasFix, LacksFix, Affected, NotAffected, CannotTell, NoCheck };
// "has the fix", "lacks the fix", "affected", "not affected", "cannot tell", "no byte check"
std::string to_string(StaticVerdict v);
// Whether the bytes say the library has the entry's hang (lacks its fix, or carries the change).
inline bool has_the_hang(StaticVerdict v) { return v == StaticVerdict::LacksFix || v == StaticVerdict::Affected; }

struct EntryCheck {
  std::string entry;  // catalog id
  std::string check;  // the check's name, "" where there is none
  StaticVerdict verdict = StaticVerdict::NoCheck;
  std::string reason;  // in words: what the bytes showed, or why they cannot tell
};

struct LibraryChecks {
  std::string path, sha256, version;  // version from the library's version string ("" unknown)
  std::string problem;                // not readable or not NCCL: no checks ran
  std::vector<EntryCheck> checks;
};

// Whether the entry's check is shutdown() in ncclSocketClose (a check with no string to look for).
inline bool has_socket_check(const catalog::Entry& e) { return !e.static_check.empty() && e.static_string.empty(); }
// One entry's check of one library that inspect() (without loading) has read already.
EntryCheck check_entry(const catalog::Entry& e, const std::string& path, const nccl::InspectResult& inspected);
// Reads the library once (never loads it) and runs each entry's check.
LibraryChecks check_library(const std::string& path, const std::vector<const catalog::Entry*>& entries);
nlohmann::json to_json(const LibraryChecks& c);

}  // namespace hangbench::validate
