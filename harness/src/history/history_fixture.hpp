// Builds small history stores through the Store API for the history tests.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "hangbench/history.hpp"
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

// "2026-11-20" plus `days` (nights run across a month's end).
inline std::string date_after(int days) {
  static const int kLength[] = {30, 31};  // November, December
  int month = 11, day = 20 + days;
  while (day > kLength[month - 11]) day -= kLength[month++ - 11];
  char text[16];
  std::snprintf(text, sizeof text, "2026-%02d-%02d", month, day);
  return text;
}

// A history table built by hand, as wide as a real one: `matrices` matrices of
// `cells` cells with long ids over `nights` nights. The first cell regressed on
// the latest night (0/20 before, 9/20), the second changed verdict (confirmed,
// then inconclusive), every third hangs every trial; NCCL changed in the second
// matrix on night 2; teardown times differ per cell.
inline hangbench::history::HistoryTable make_table(int matrices, int cells, int nights) {
  using namespace hangbench;
  static const char* kMatrices[] = {"socket-teardown", "ddp-abort-h200", "pp-pipeline-1gpu", "mpi-progress-ci"};
  history::HistoryTable table;
  table.store_path = "history.sqlite";
  table.report_link = "reports/{run}.html";
  for (int m = 0; m < matrices; ++m) {
    for (int c = 0; c < cells; ++c) {
      history::CellHistory cell;
      cell.matrix = kMatrices[m % 4];
      cell.cell_id = "nccl=2.17.1+teardown=" + std::string(c % 2 ? "watchdog" : "exit") +
                     "+workers=after+backend=c10d+variant=" + std::to_string(c);
      const bool first = m == 0 && c == 0, second = m == 0 && c == 1, hangs = c % 3 == 2;
      for (int n = 0; n < nights; ++n) {
        history::CellNight night;
        const bool latest = n == nights - 1;
        night.run_id = "2026" + date_after(n).substr(5, 2) + date_after(n).substr(8, 2) + "-m" + std::to_string(m);
        night.started_at = date_after(n) + "T02:00:00Z";
        night.n = 20;
        night.hangs = hangs ? 20 : first && latest ? 9 : 0;
        night.crashed = m == 1 && c == 3 && n == 1 ? 2 : 0;
        night.verdict = second && latest ? Verdict::Inconclusive : Verdict::Confirmed;
        if (!hangs) night.teardown_s = {night.n - night.hangs, 0.4, 0.5 + 0.05 * c + 0.01 * n, 0.7, 0.8, 0.9};
        if (m == 1 && n == 2) night.changes = {"nccl"};
        cell.nights.push_back(night);
      }
      table.cells.push_back(cell);
    }
  }
  return table;
}

}  // namespace history_test
