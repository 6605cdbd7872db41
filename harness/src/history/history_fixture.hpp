// Builds small history stores through the Store API for the history tests.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "hangbench/store.hpp"

namespace history_test {

namespace fs = std::filesystem;

// A fresh folder under the temp directory, removed by the destructor.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

struct NightSpec {
  std::string run_id;
  std::string date;  // "2026-11-27"
  int hangs = 0, n = 20;
  std::string nccl_hash = "aaaa";
  std::string driver = "580.159.04";
  hangbench::Expectation expect = hangbench::Expectation::None;
  double teardown_s = 0.5;  // of passed trials
  std::string matrix = "history-test";
};

inline const std::string kLib = "/opt/nccl/2.17.1/lib/libnccl.so.2";

// One run with one cell "build=2.17.1" holding `hangs` HANG and n-hangs PASSED trials.
inline void add_night(hangbench::Store& store, const NightSpec& spec) {
  using namespace hangbench;
  Matrix matrix;
  matrix.name = spec.matrix;
  Cell cell;
  cell.id = "build=2.17.1";
  cell.params = {{"build", "2.17.1"}};
  cell.trials = spec.n;
  cell.expect = spec.expect;
  cell.hash_files = {kLib};
  matrix.cells = {cell};
  Provenance provenance;
  provenance.started_at = spec.date + "T02:00:00Z";
  provenance.driver = spec.driver;
  provenance.library_hashes[kLib] = spec.nccl_hash;
  store.begin_run(spec.run_id, matrix, provenance);
  for (int i = 0; i < spec.n; ++i) {
    TrialResult t;
    t.cell_id = cell.id;
    t.index = i;
    t.outcome = i < spec.hangs ? Outcome::Hang : Outcome::Passed;
    t.exit_code = t.outcome == Outcome::Passed ? 0 : -1;
    t.wall_s = 1.0;
    if (t.outcome == Outcome::Passed) {
      t.phases = {{"teardown_begin", 100.0, 1, 0}, {"teardown_end", 100.0 + spec.teardown_s, 1, 0}};
    }
    store.record_trial(spec.run_id, t);
  }
  store.finish_run(spec.run_id, "complete");
}

}  // namespace history_test
