// Which of a process's NCCL libraries is the one that waits: torch loads its own
// through an RPATH while a preloaded one interposes, so both are mapped and only
// the frames on the waiting stack say which one runs.
#include "hangbench/nccl_in_use.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose {

using rules::join;

namespace {

bool named_shim(const std::string& path) {
  auto slash = path.rfind('/');
  return path.find("shim", slash == std::string::npos ? 0 : slash) != std::string::npos;
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The library one of the threads runs in: a frame's module is the whole path for
// libnccl (native_stacks.cpp), or only the file name for stacks stored earlier.
std::string library_on_stacks(const ProcessSnapshot& p, const std::vector<std::string>& candidates,
                              const std::vector<int>& tids, int& on_tid) {
  for (int tid : tids)
    for (const auto& t : p.stacks.threads) {
      if (t.tid != tid || tid == 0) continue;
      for (const auto& f : t.frames) {
        if (f.module.find("libnccl") == std::string::npos) continue;
        std::vector<std::string> matches;
        for (const auto& c : candidates)
          if (c == f.module || base_name(c) == base_name(f.module)) matches.push_back(c);
        if (std::find(candidates.begin(), candidates.end(), f.module) != candidates.end()) matches = {f.module};
        if (matches.size() == 1) {
          on_tid = tid;
          return matches.front();
        }
      }
    }
  return "";
}

}  // namespace

NcclLibraries nccl_libraries_of(const ProcessSnapshot& p, const std::vector<int>& waiting_tids) {
  NcclLibraries out;
  std::vector<std::string> candidates;
  for (const auto& lib : p.libraries) {
    if (!is_nccl_library(lib)) continue;
    (named_shim(lib) ? out.shims : candidates).push_back(lib);
  }
  int on_tid = 0;
  out.in_use = library_on_stacks(p, candidates, waiting_tids, on_tid);
  if (!out.in_use.empty()) {
    out.how = fmt::format("its frames are on thread {}'s stack", on_tid);
  } else if (candidates.size() == 1) {
    out.in_use = candidates.front();
    out.how = "the only NCCL library loaded";
  }
  // Unknown which one runs: inspect them all, the shims stay apart.
  std::vector<std::string> to_inspect = out.in_use.empty() ? candidates : std::vector<std::string>{out.in_use};
  for (const auto& lib : to_inspect) {
    auto facts = describe_nccl_library(lib);
    if (facts.inspected || facts.sentence.find("not an NCCL library") == std::string::npos) {
      if (lib == out.in_use) {
        out.facts = facts;
        out.sentences.push_back(facts.sentence + " (in use: " + out.how + ")");
      } else {
        out.sentences.push_back(facts.sentence);
      }
    } else {
      out.shims.push_back(lib);
      if (lib == out.in_use) out.in_use.clear();
    }
  }
  for (const auto& lib : candidates)
    if (!out.in_use.empty() && lib != out.in_use) out.loaded_only.push_back(lib);
  if (!out.loaded_only.empty())
    out.sentences.push_back("also loaded, not on the waiting stack: " + join(out.loaded_only, ", "));
  if (!out.shims.empty())
    out.sentences.push_back("shims (not NCCL; they stand in for symbols the loaded NCCL lacks): " +
                            join(out.shims, ", "));
  return out;
}

}  // namespace hangbench::diagnose
