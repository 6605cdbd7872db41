// Each entry's check of a library's bytes (hangbench/static_check.hpp): the library is
// read, never loaded, so a CPU machine judges builds for any GPU.
#include "hangbench/static_check.hpp"

#include <fmt/format.h>

#include "hangbench/nccl_inspect.hpp"

namespace hangbench::validate {

std::string to_string(StaticVerdict v) {
  switch (v) {
    case StaticVerdict::HasFix:
      return "has the fix";
    case StaticVerdict::LacksFix:
      return "lacks the fix";
    case StaticVerdict::Affected:
      return "affected";
    case StaticVerdict::NotAffected:
      return "not affected";
    case StaticVerdict::CannotTell:
      return "cannot tell";
    case StaticVerdict::NoCheck:
      break;
  }
  return "no byte check";
}

namespace {

// inspect()'s own verdict, with its reasons: a stripped wheel that imports shutdown() cannot
// say whether ncclSocketClose is the caller, and says so.
EntryCheck socket_close_check(const catalog::Entry& e, const nccl::InspectResult& inspected) {
  EntryCheck c{e.id, e.static_check, StaticVerdict::CannotTell,
               inspected.reasons.empty() ? "" : inspected.reasons.back()};
  if (inspected.fix == nccl::FixVerdict::Yes) c.verdict = StaticVerdict::HasFix;
  if (inspected.fix == nccl::FixVerdict::No) c.verdict = StaticVerdict::LacksFix;
  return c;
}

EntryCheck string_check(const catalog::Entry& e, const std::string& path, const nccl::InspectResult& inspected) {
  EntryCheck c{e.id, e.static_check, StaticVerdict::CannotTell, ""};
  // The .rodata inspect() already read, when it read this library; else the file once more.
  const bool carried = !inspected.rodata.empty() && inspected.path == path
                           ? nccl::rodata_carries_string(inspected.rodata, e.static_string)
                           : nccl::carries_string(path, e.static_string);
  const bool fixed = carried == (e.static_present_means == "fixed");
  // No release fixes it: a library without the change predates it, it has no fix.
  const bool no_fix = e.claimed_fixed.empty() && e.measured.fixed_from.empty();
  if (no_fix)
    c.verdict = fixed ? StaticVerdict::NotAffected : StaticVerdict::Affected;
  else
    c.verdict = fixed ? StaticVerdict::HasFix : StaticVerdict::LacksFix;
  c.reason = fmt::format("its read-only data {} the string {}", carried ? "holds" : "does not hold", e.static_string);
  return c;
}

}  // namespace

EntryCheck check_entry(const catalog::Entry& e, const std::string& path, const nccl::InspectResult& inspected) {
  if (!e.static_string.empty()) {
    try {
      return string_check(e, path, inspected);
    } catch (const std::exception& error) {
      return {e.id, e.static_check, StaticVerdict::CannotTell, error.what()};
    }
  }
  if (has_socket_check(e)) return socket_close_check(e, inspected);
  const bool release_bug = !e.claimed_affected.empty() || !e.measured.releases.empty();
  return {e.id, "", StaticVerdict::NoCheck,
          !e.static_none.empty() ? e.static_none
          : release_bug          ? "the entry has no static check"
                                 : "no library release bug: nothing in the library's bytes to fix"};
}

LibraryChecks check_library(const std::string& path, const std::vector<const catalog::Entry*>& entries) {
  LibraryChecks out;
  out.path = path;
  nccl::InspectResult inspected;
  try {
    inspected = nccl::inspect(path, /*try_dlopen=*/false, /*with_device_code=*/false);
  } catch (const std::exception& e) {
    out.problem = e.what();
    return out;
  }
  out.sha256 = inspected.sha256;
  out.version = inspected.version;
  for (const catalog::Entry* e : entries) out.checks.push_back(check_entry(*e, path, inspected));
  return out;
}

nlohmann::json to_json(const LibraryChecks& c) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& k : c.checks)
    checks.push_back({{"entry", k.entry}, {"check", k.check}, {"verdict", to_string(k.verdict)}, {"reason", k.reason}});
  nlohmann::json j{{"library", c.path}, {"sha256", c.sha256}, {"version", c.version}, {"checks", checks}};
  if (!c.problem.empty()) j["problem"] = c.problem;
  return j;
}

}  // namespace hangbench::validate
