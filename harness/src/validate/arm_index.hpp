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

  // An arm's identity in the index: its key, and the key an index written before deadlines
  // were part of keys holds for it, whose entry counts only where the stored run's cell had
  // `deadline_s` after the teardown phase.
  struct Keys {
    std::string key, before_deadlines;
    double deadline_s = 0;
  };
  // Fills `arm` from the trials entered under its keys when at least `trials` of them
  // ended; false (and `arm` untouched) otherwise, with the reason on `log` when the
  // entry exists but cannot be read.
  bool reuse(const Keys& keys, int trials, const std::string& teardown_phase, ArmTally& arm, std::ostream* log) const;

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
