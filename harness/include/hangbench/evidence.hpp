// Evidence of a hang read from live processes: /proc, sockets, descriptor holders,
// debugger stacks. Used by the executor (before it kills a hung trial) and by
// `hangbench diagnose`. Owned by harness/src/diagnose.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::evidence {

struct CaptureOptions {
  bool stacks = false;        // attach gdb/cuda-gdb in batch mode (pauses the process briefly)
  DebuggerOptions debugger;   // as diagnose takes them (hangbench/snapshot.hpp)
  nlohmann::json provenance;  // the run's; written as evidence.json's "provenance" when not null
};

struct CaptureResult {
  std::string summary;             // one paragraph in words, e.g. the holder sentence
  nlohmann::json json;             // the whole snapshot, schema in docs/evidence.md
  std::vector<std::string> files;  // what was written under the folder
};

// Reads everything about `pids` (and the holders of their connections, inside or
// outside that set) and writes evidence.json and evidence.txt under `dir`.
CaptureResult capture_to_dir(const std::vector<int>& pids, const std::string& dir, const CaptureOptions& opts);

}  // namespace hangbench::evidence
