#pragma once
// The reuse index of a validate or sweep folder (<out>/references.json): each arm's
// trials keyed by the library's bytes, the command and the trials asked, so that a
// later validate or sweep in the same folder reuses them instead of running them again.
// Cells are entered as soon as their last trial is recorded: a sweep killed mid-way
// (a device call's time limit) resumes from the cells it finished.
#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/validate.hpp"

namespace hangbench::validate {

class ArmIndex {
 public:
  // `empty`: ignore what the folder holds (--no-reuse); what is entered is still saved.
  ArmIndex(std::string out_dir, bool empty);

  // Fills `arm` from the trials entered under `key` when at least `trials` of them
  // ended; false (and `arm` untouched) otherwise, with the reason on `log` when the
  // entry exists but cannot be read.
  bool reuse(const std::string& key, int trials, const std::string& teardown_phase, ArmTally& arm,
             std::ostream* log) const;

  // One arm's trials: the cell `cell` of the run in `store` (an empty run id: the store's
  // latest run, for a run still going on).
  struct Record {
    std::string key, store, run_id, cell, library;
  };
  // Enters the records and saves the index once, at once. Thread-safe.
  void enter(const std::vector<Record>& records);

 private:
  std::string out_dir_;
  mutable std::mutex mutex_;
  nlohmann::json index_;
  void save_locked() const;
};

}  // namespace hangbench::validate
