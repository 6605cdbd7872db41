// A fixed run shared by the report tests: four cells of a socket-teardown-like
// matrix, every outcome kind, phases from two ranks, and an evidence summary full
// of characters that each format must escape. Provenance is fixed, so every
// exporter's output is byte-for-byte deterministic.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "hangbench/summary.hpp"

namespace hangbench::testing {

inline const char* kHolderSentence =
    "the ESTABLISHED connection 192.0.2.2:50627 <-> 192.0.2.2:50950 is held open by pid 894, "
    "a child that the rank forked at 10:02:11 & that holds a duplicate of the rank's fd 57 | \"proxy\"\n"
    "main thread in futex_do_wait";

inline Cell make_cell(const std::string& build, const std::string& fork, Expectation expect) {
  Cell c;
  c.id = "build=" + build + ",fork=" + fork;
  c.params = {{"build", build}, {"fork", fork}};
  c.argv = {"socket_teardown", "--fork=" + fork};
  c.trials = 7;
  c.timeout_s = 5;
  c.expect = expect;
  return c;
}

// A trial of `cell` with phases from ranks 0 and 1; rank 1 tears down slower.
inline TrialResult make_trial(const Cell& cell, int index, Outcome outcome, double wall) {
  TrialResult t;
  t.cell_id = cell.id;
  t.index = index;
  t.outcome = outcome;
  t.started_at = 1764669600.0 + index * 10;
  t.wall_s = wall;
  t.exit_code = outcome == Outcome::Failed ? 3 : (outcome == Outcome::Passed ? 0 : -1);
  t.signal = outcome == Outcome::Crashed ? 11 : (outcome == Outcome::Hang ? 9 : 0);
  const double s = t.started_at;
  for (int rank : {0, 1}) {
    t.phases.push_back({"init_done", s + 0.3, 1000 + rank, rank});
    t.phases.push_back({"teardown_begin", s + 1.0, 1000 + rank, rank});
    if (outcome != Outcome::Hang)
      t.phases.push_back({"teardown_end", s + 1.5 + 0.01 * index + 0.1 * rank, 1000 + rank, rank});
  }
  if (outcome == Outcome::Hang) {
    t.hung_phase = "teardown_begin";
    t.evidence_dir = "evidence/" + cell.id + "/" + std::to_string(index);
    t.evidence_summary = kHolderSentence;
  }
  return t;
}

inline RunSummary make_fixed_run() {
  Matrix m;
  m.path = "workloads/socket_teardown/matrix.toml";
  m.sha256 = "5d41402abc4b2a76b9719d911017c592ae1d7a5fb2e0f1a3c5d8e9f0a1b2c3d4";
  m.name = "socket-teardown-demo";
  m.alpha = 0.01;
  m.cells = {make_cell("2.17.1", "after", Expectation::Hang),
             make_cell("2.17.1+backport", "after", Expectation::NoHang),
             make_cell("2.17.1", "none", Expectation::NoHang), make_cell("2.17.1+backport", "none", Expectation::None)};
  m.comparisons = {{"fork after: 2.17.1 vs backport",
                    {{"build", "2.17.1"}, {"fork", "after"}},
                    {{"build", "2.17.1+backport"}, {"fork", "after"}}},
                   {"", {{"build", "2.17.1"}}, {{"build", "2.17.1+backport"}}}};
  std::vector<TrialResult> trials;
  for (int i = 0; i < 7; ++i) trials.push_back(make_trial(m.cells[0], i, Outcome::Hang, 5.0 + 0.01 * i));
  for (int i = 0; i < 7; ++i) trials.push_back(make_trial(m.cells[1], i, Outcome::Passed, 1.6 + 0.05 * i));
  for (int i = 0; i < 6; ++i) trials.push_back(make_trial(m.cells[2], i, Outcome::Passed, 1.55 + 0.02 * i));
  trials.push_back(make_trial(m.cells[2], 6, Outcome::Hang, 5.02));
  TrialResult infra = make_trial(m.cells[2], 7, Outcome::Infra, 0);
  infra.infra_error = "fork failed: Resource temporarily unavailable";
  infra.phases.clear();
  trials.push_back(infra);
  trials.push_back(make_trial(m.cells[3], 0, Outcome::Passed, 1.7));
  trials.push_back(make_trial(m.cells[3], 1, Outcome::Crashed, 0.9));
  trials.push_back(make_trial(m.cells[3], 2, Outcome::Failed, 1.1));

  Provenance p;
  p.hangbench_version = "0.1.0";
  p.hangbench_commit = "0123456789ab";
  p.argv = {"hangbench", "run", "--matrix", "workloads/socket_teardown/matrix.toml"};
  p.host = "gpu-node-7";
  p.kernel = "6.18.0";
  p.gpu = "NVIDIA H200";
  p.driver = "580.159.04";
  p.cuda = "13.0";
  p.started_at = "2026-12-02T10:00:00Z";
  p.matrix_path = m.path;
  p.matrix_sha256 = m.sha256;
  p.library_hashes = {
      {"cache/nccl/2.17.1/libnccl.so.2", "aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233"}};
  p.environment = {{"NCCL_DEBUG", "WARN"}};
  return summarize(std::move(m), std::move(p), std::move(trials));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compares `actual` with tests/golden/<name>. Golden files change only when the
// run sets HB_UPDATE_GOLDEN=1, and then the test still reports what it wrote.
inline void expect_matches_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(HB_GOLDEN_DIR) + "/" + name;
  const char* update = std::getenv("HB_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    std::cout << "HB_UPDATE_GOLDEN=1: wrote " << path << "\n";
    return;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good()) << "missing golden file " << path
                            << "; create it with HB_UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(actual, read_file(path)) << "output differs from " << path
                                     << "; if the change is intended, rerun with HB_UPDATE_GOLDEN=1";
}

}  // namespace hangbench::testing
