// The evidence of a hung trial, taken while its processes still live. The
// executor only knows this interface; `hangbench diagnose`'s folder implements
// it (diagnose::make_hang_capture) and whoever builds the executor plugs it in.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hangbench {

// What the executor knows of a hung trial when it asks for its evidence.
struct HangCaptureRequest {
  std::vector<int> pids;      // the trial's live processes on this host, sorted
  std::string dir;            // where the evidence files go
  bool stacks = false;        // debugger stacks too (this trial won the cell's stack budget)
  nlohmann::json provenance;  // the run's; null when the caller has none
  // A launcher cell's ranks live outside its tree: found by the trial's tag in
  // their environment and by the pid and host of their phase lines.
  std::string trial_env_entry;  // "HANGBENCH_TRIAL_ID=..."
  struct PhaseWriter {
    int pid = 0;
    int rank = -1;
    std::string host;  // "" = this host
  };
  std::vector<PhaseWriter> phase_writers;
};

class HangCapture {
 public:
  virtual ~HangCapture() = default;
  // Writes the evidence under request.dir and returns its summary in words;
  // throws when it cannot (the executor records why and ends the trial anyway).
  virtual std::string capture(const HangCaptureRequest& request) const = 0;
};

}  // namespace hangbench
