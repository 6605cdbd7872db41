// `hangbench sweep` as a library (hangbench/sweep.hpp): the list file, release
// order, the computed sentence, a whole sweep through the fake executor with bad
// rows beside good ones, the verdict history, and golden files of every format
// (and of validate's Markdown and JSON, which share the row's words).
#include "hangbench/sweep.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "hangbench/catalog.hpp"
#include "hangbench/executor.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/validate.hpp"
#include "report/report_fixture.hpp"
#include "sweep/release_order.hpp"
#include "sweep/row_text.hpp"
#include "validate/validate_fixture.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;
using namespace hangbench;
using VerdictIs = hangbench::validate::Verdict;

namespace {

using hangbench::testing::kWholeTrial;
using hangbench::testing::trial;

validate::ArmTally tally(validate::Role role, int hangs, int n, int before = 0) {
  std::vector<TrialResult> trials;
  for (int i = 0; i < n; ++i) trials.push_back(trial("c", i, i < hangs ? Outcome::Hang : Outcome::Passed, kWholeTrial));
  for (int i = 0; i < before; ++i) trials.push_back(trial("c", n + i, Outcome::Hang, {"start", "nccl_loaded"}));
  validate::ArmTally a;
  a.role = role;
  a.library = "/cache/" + validate::to_string(role) + "/lib/libnccl.so.2";
  a.sha256 = std::string(64, 'a');
  validate::tally_trials(a, trials, "c", "teardown_begin");
  return a;
}

sweep::Row row(const std::string& release, VerdictIs verdict, validate::StaticFix fix, int hangs, int before = 0) {
  sweep::Row r;
  r.facts.path = "/cache/vendor/nvidia-nccl-cu12-" + release + "/lib/libnccl.so.2";
  r.facts.release = release;
  r.facts.package = release < "2.16" ? "nvidia-nccl-cu11" : "nvidia-nccl-cu12";
  r.facts.wheel = "nvidia_nccl_cu12-" + release + "-py3-none-manylinux1_x86_64.whl";
  r.facts.cuda_build = "12.1";
  r.facts.slimmed = true;
  r.facts.original_sha256 = std::string(64, 'b');
  r.reading.version = release;
  r.reading.fix = fix;
  if (before > 0) r.reading.gpu_code_problem = "no code for sm_90";
  r.arm = tally(validate::Role::Candidate, hangs, before > 0 ? 0 : 7, before);
  r.decision.verdict = verdict;
  r.decision.references_separate = true;
  r.decision.reason = "reason of " + release;
  return r;
}

Provenance fixed_provenance() {
  Provenance p;
  p.hangbench_version = "0.9.0";
  p.hangbench_commit = "0123456789abcdef";
  p.argv = {"hangbench", "sweep", "--list", "libs.txt"};
  p.host = "gpu-node-1";
  p.kernel = "6.8.0";
  p.gpu = "NVIDIA H200";
  p.driver = "580.95";
  p.cuda = "13.0";
  p.started_at = "2026-12-03T07:00:00Z";
  return p;
}

// A table of every kind of row, as a sweep of the vendor wheels would give.
sweep::Result fixed_result() {
  sweep::Result r;
  r.rows = {row("2.14.3", VerdictIs::Inconclusive, validate::StaticFix::Absent, 0, 7),
            row("2.15.5", VerdictIs::NotAffected, validate::StaticFix::Absent, 0),
            row("2.16.2", VerdictIs::Vulnerable, validate::StaticFix::Absent, 7),
            row("2.17.1", VerdictIs::Vulnerable, validate::StaticFix::Absent, 7),
            row("2.18.1", VerdictIs::Fixed, validate::StaticFix::Present, 0),
            row("2.19.3", VerdictIs::Fixed, validate::StaticFix::Present, 0)};
  sweep::Row missing;
  missing.facts.path = "/cache/missing/libnccl.so.2";
  missing.problem = "no such file";
  r.rows.push_back(missing);
  r.vulnerable = tally(validate::Role::Vulnerable, 7, 7);
  r.fixed = tally(validate::Role::Fixed, 0, 7);
  r.references = stats::fisher_exact(r.vulnerable.tally(), r.fixed.tally());
  r.references_separate = true;
  r.trials = 7;
  r.reference_trials = 7;
  r.alpha = 0.001;
  r.timeout_s = 20;
  r.teardown_timeout_s = 3;
  r.teardown_phase = "teardown_begin";
  r.workload_command = "nccl_teardown --teardown=abort --workers-forked=after";
  r.seconds = 24.5;
  r.run_id = "20261203-070000-abcd";
  r.run_dir = "hangbench-out/sweep/20261203-070000-abcd";
  r.argv = {"hangbench", "sweep", "--list", "libs.txt"};
  r.provenance = fixed_provenance();
  r.sentence = sweep::summary_sentence(r.rows);
  return r;
}

}  // namespace

TEST(SweepReleaseOrder, NumericNotLexical) {
  EXPECT_TRUE(sweep::release_less("2.9.9", "2.13.4"));
  EXPECT_TRUE(sweep::release_less("2.25.1", "2.25.1.post1"));
  EXPECT_TRUE(sweep::release_less("2.25.1.post1", "2.26.2"));
  EXPECT_TRUE(sweep::release_less("2.32.3", ""));  // unknown last
  EXPECT_FALSE(sweep::release_less("", "2.13.4"));
}

TEST(SweepSentence, ComputedFromTheRows) {
  const sweep::Result r = fixed_result();
  EXPECT_EQ(r.sentence,
            "NCCL 2.16.2 to 2.17.1 hang in ncclCommAbort (vulnerable); fixed from 2.18.1 on; 2.15.5 is not "
            "affected (no shutdown() in ncclSocketClose, but the teardown does not wait for its peers); could not "
            "judge 2.14.3 (did not initialise on this GPU: no code for sm_90) and /cache/missing/libnccl.so.2 (no "
            "such file).");
}

TEST(SweepSentence, FixedFromTheLastReleaseOn) {
  std::vector<sweep::Row> rows = {row("2.17.1", VerdictIs::Vulnerable, validate::StaticFix::Absent, 7),
                                  row("2.18.1", VerdictIs::Fixed, validate::StaticFix::Present, 0),
                                  row("2.32.3", VerdictIs::Fixed, validate::StaticFix::Present, 0)};
  EXPECT_EQ(sweep::summary_sentence(rows), "NCCL 2.17.1 hangs in ncclCommAbort (vulnerable); fixed from 2.18.1 on.");
  EXPECT_EQ(sweep::summary_sentence({}), "No library was swept.");
}

TEST(SweepList, CommentsBlankLinesAndRelativePaths) {
  const fs::path dir = fs::temp_directory_path() / ("hb_sweep_list_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "libs.txt") << "# vendor wheels\n\n  a/libnccl.so.2  # cu12 2.17.1\n/abs/libnccl.so.2\n";
  const auto libs = sweep::read_list((dir / "libs.txt").string());
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0], (dir / "a/libnccl.so.2").string());
  EXPECT_EQ(libs[1], "/abs/libnccl.so.2");
  std::ofstream(dir / "bad.txt") << "ok.so\ntwo paths.so\n";
  try {
    sweep::read_list((dir / "bad.txt").string());
    ADD_FAILURE() << "a line with two paths must be refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "empty.txt") << "# nothing yet\n\n";
  try {
    sweep::read_list((dir / "empty.txt").string());
    ADD_FAILURE() << "an empty list must be named as empty";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.txt: the library list is empty"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// A whole sweep with the fake executor: vendor-like cache entries (manifests
// beside), a missing file and a file that is not NCCL. The bad rows are said
// per row; the others are judged against the references of the same wave.
class SweepWithFakeExecutor : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("hb_sweep_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (const char* variant : {"2.17.1", "2.17.1+backport"}) add_library(root_ / "refs" / variant, variant, "");
    add_library(root_ / "vendor/nvidia-nccl-cu12-2.16.5-aaaa", "2.16.5", "hangs");
    add_library(root_ / "vendor/nvidia-nccl-cu12-2.18.3-bbbb", "2.18.3", "clean");
    std::ofstream(root_ / "not-nccl.so") << "plain text\n";
    std::ofstream(root_ / "workload") << "#!/bin/sh\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  void add_library(const fs::path& entry, const std::string& release, const std::string& tag) {
    fs::create_directories(entry / "lib");
    fs::copy_file(FAKE_NCCL_PATH, entry / "lib" / "libnccl.so.2");
    std::ofstream(entry / "lib" / "libnccl.so.2", std::ios::app) << release << tag;
    if (entry.parent_path().filename() != "vendor") return;
    nlohmann::json m = {{"schema", "hangbench.nccl-vendor/1"},
                        {"package", "nvidia-nccl-cu12"},
                        {"package_version", release},
                        {"wheel", "nvidia_nccl_cu12-" + release + "-py3-none-manylinux1_x86_64.whl"},
                        {"cuda_build", "12.1"},
                        {"original_library_sha256", std::string(64, 'c')},
                        {"slimmed_for_transport", {{"kept_sm", 90}}}};
    std::ofstream(entry / "manifest.json") << m.dump(2);
  }

  sweep::Request request() const {
    sweep::Request r;
    r.design.reference_dir = (root_ / "refs").string();
    r.design.workload = (root_ / "workload").string();
    r.design.out_dir = (root_ / "out").string();
    r.design.trials = 7;
    r.libraries = {(root_ / "vendor/nvidia-nccl-cu12-2.18.3-bbbb/lib/libnccl.so.2").string(),
                   (root_ / "missing.so").string(), (root_ / "not-nccl.so").string(),
                   (root_ / "vendor/nvidia-nccl-cu12-2.16.5-aaaa/lib/libnccl.so.2").string()};
    r.history = (root_ / "history.sqlite").string();
    return r;
  }

  // Over the "vulnerable" reference and libraries tagged "hangs", every trial hangs in the teardown.
  static FakeExecutor::Script script(bool newer_hangs = false) {
    return [newer_hangs](const Cell& cell, int index) {
      const std::string lib = cell.argv.back();
      const bool hangs = cell.params.at("role") == "vulnerable" || lib.find("2.16.5") != std::string::npos ||
                         (newer_hangs && lib.find("2.18.3") != std::string::npos);
      return trial(cell.id, index, hangs ? Outcome::Hang : Outcome::Passed, kWholeTrial);
    };
  }
  static FakeExecutor executor(bool newer_hangs = false) { return FakeExecutor(script(newer_hangs)); }
  fs::path root_;
};

TEST_F(SweepWithFakeExecutor, MissingReferencesOfAnyEntryStopTheSweepBeforeItsFirstTrial) {
  FakeExecutor fake = executor();
  sweep::Request r = request();
  r.hangs = {"nccl-launch-blocking-proxy", "nccl-net-error-swallowed"};
  try {
    sweep::run(r, &fake);
    ADD_FAILURE() << "a sweep without its reference wheels ran";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("nothing was run"));
    EXPECT_THAT(what, HasSubstr("catalog/nccl-launch-blocking-proxy.toml: its reference wheel 2.17.1"));
    EXPECT_THAT(what, HasSubstr("catalog/nccl-net-error-swallowed.toml: its reference wheel 2.27.7"));
  }
  EXPECT_TRUE(fake.calls().empty());
}

TEST_F(SweepWithFakeExecutor, BadRowsAreReportedAndTheOthersJudged) {
  FakeExecutor fake = executor();
  const sweep::Result r = sweep::run(request(), &fake);
  ASSERT_EQ(r.rows.size(), 4u);
  // Release order: 2.16.5, 2.18.3, then the two without a release.
  EXPECT_EQ(r.rows[0].facts.release, "2.16.5");
  EXPECT_EQ(r.rows[0].facts.package, "nvidia-nccl-cu12");
  EXPECT_TRUE(r.rows[0].facts.slimmed);
  EXPECT_EQ(r.rows[0].decision.verdict, VerdictIs::Vulnerable);
  EXPECT_EQ(r.rows[1].facts.release, "2.18.3");
  EXPECT_EQ(r.rows[1].decision.verdict, VerdictIs::NotAffected);  // the stand-in has no shutdown()
  int problems = 0;
  for (const auto& row : r.rows) problems += row.judged() ? 0 : 1;
  EXPECT_EQ(problems, 2);
  EXPECT_NE(r.sentence.find("no such file"), std::string::npos) << r.sentence;
  EXPECT_NE(r.sentence.find("not NCCL"), std::string::npos) << r.sentence;
  EXPECT_EQ(fake.calls().size(), 4u * 7u);  // two candidates and two references, one wave
  // First night: 2.16.5 is new and vulnerable, which the nightly must flag.
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].release, "2.16.5");
  EXPECT_EQ(sweep::exit_code_of(r), 1);
  const nlohmann::json j = sweep::to_json(r);
  EXPECT_EQ(j["schema"], "hangbench.sweep/1");
  EXPECT_EQ(j["rows"].size(), 4u);
}

TEST_F(SweepWithFakeExecutor, HistoryFlagsAReleaseThatChangesVerdict) {
  FakeExecutor first = executor();
  sweep::run(request(), &first);
  FakeExecutor same = executor();
  const sweep::Result again = sweep::run(request(), &same);
  EXPECT_TRUE(again.changes.empty());
  EXPECT_EQ(sweep::exit_code_of(again), 0);
  FakeExecutor regressed = executor(/*newer_hangs=*/true);
  const sweep::Result night3 = sweep::run(request(), &regressed);
  ASSERT_EQ(night3.changes.size(), 1u);
  EXPECT_EQ(night3.changes[0].release, "2.18.3");
  EXPECT_EQ(night3.changes[0].before, "not affected");
  EXPECT_EQ(night3.changes[0].after, "vulnerable");
  EXPECT_EQ(sweep::exit_code_of(night3), 1);
}

TEST_F(SweepWithFakeExecutor, NoLibraryIsAUsageError) {
  sweep::Request r = request();
  r.libraries.clear();
  FakeExecutor fake = executor();
  EXPECT_THROW(sweep::run(r, &fake), UsageError);
}

// `sweep --resume`: a sweep given more libraries runs only those; one that has nothing
// left to run still writes the whole table, from the runs that judged it.
TEST_F(SweepWithFakeExecutor, ResumeRunsOnlyTheLibrariesNotYetJudged) {
  const std::string hangs = (root_ / "vendor/nvidia-nccl-cu12-2.16.5-aaaa/lib/libnccl.so.2").string();
  const std::string clean = (root_ / "vendor/nvidia-nccl-cu12-2.18.3-bbbb/lib/libnccl.so.2").string();
  sweep::Request r = request();
  r.history.clear();
  r.libraries = {hangs};
  FakeExecutor first = executor();
  const sweep::Result one = sweep::run(r, &first);
  EXPECT_EQ(first.calls().size(), 3u * 7u);

  r.libraries = {hangs, clean};
  r.design.reuse_candidates = true;
  FakeExecutor second = executor();
  const sweep::Result both = sweep::run(r, &second);
  ASSERT_EQ(second.calls().size(), 7u);  // 2.18.3 only: 2.16.5 and both references are reused
  for (const auto& [cell, index] : second.calls()) EXPECT_EQ(cell, "lib=candidate-02") << index;
  ASSERT_EQ(both.rows.size(), 2u);
  EXPECT_EQ(both.rows[0].decision.verdict, VerdictIs::Vulnerable);
  EXPECT_TRUE(both.rows[0].arm.reused);
  EXPECT_EQ(both.rows[0].arm.run_dir, one.run_dir);  // its report link is the run that holds its trials
  EXPECT_THAT(both.rows[0].arm.source, HasSubstr("run " + one.run_id));
  EXPECT_EQ(both.rows[1].decision.verdict, VerdictIs::NotAffected);
  EXPECT_FALSE(both.rows[1].arm.reused);
  EXPECT_THAT(sweep::to_html(both, (root_ / "out").string()),
              HasSubstr(fs::path(one.run_dir).filename().string() + "/report.md"));

  FakeExecutor third = executor();
  const sweep::Result nothing = sweep::run(r, &third);
  EXPECT_TRUE(third.calls().empty());
  EXPECT_EQ(nothing.rows[0].decision.verdict, VerdictIs::Vulnerable);
  EXPECT_EQ(nothing.rows[1].decision.verdict, VerdictIs::NotAffected);
  EXPECT_FALSE(nothing.provenance.started_at.empty());  // the newest reused run's
  EXPECT_EQ(nothing.run_id, both.run_id);

  // Without --resume every library is measured again (a nightly must not reuse last night).
  r.design.reuse_candidates = false;
  FakeExecutor fresh = executor();
  sweep::run(r, &fresh);
  EXPECT_EQ(fresh.calls().size(), 2u * 7u);
}

// An entry's phase_timeout is its deadline after its phase (the peer-death entries: 12 s,
// as their matrices), unless --teardown-timeout says otherwise; and a cell judged with one
// deadline is not reused for a sweep with another.
TEST_F(SweepWithFakeExecutor, AnEntrysPhaseTimeoutIsItsDeadlineUnlessOneIsGiven) {
  add_library(root_ / "vendor/nvidia-nccl-cu12-2.25.1-ffff", "2.25.1", "hangs");
  add_library(root_ / "vendor/nvidia-nccl-cu12-2.26.2-gggg", "2.26.2", "clean");
  const catalog::Entry* spin = catalog::find("nccl-progress-abort-spin");
  ASSERT_NE(spin, nullptr);
  ASSERT_EQ(spin->reproducer.phase_timeout_s, 12);
  sweep::Request r = request();
  r.history.clear();
  r.libraries = {(root_ / "vendor/nvidia-nccl-cu12-2.25.1-ffff/lib/libnccl.so.2").string(),
                 (root_ / "vendor/nvidia-nccl-cu12-2.26.2-gggg/lib/libnccl.so.2").string()};
  r.hangs = {"nccl-progress-abort-spin"};
  r.design.reuse_candidates = true;
  std::mutex mutex;
  std::set<double> deadlines;
  auto script = [&](const Cell& cell, int index) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      deadlines.insert(cell.phase_timeouts_s.at("abort_begin"));
    }
    const bool hangs = cell.argv.back().find("2.25.1") != std::string::npos;
    return trial(cell.id, index, hangs ? Outcome::Hang : Outcome::Passed,
                 {"start", "nccl_loaded", "peer_dead", "abort_begin"});
  };
  FakeExecutor first(script);
  const sweep::Result twelve = sweep::run(r, &first);
  EXPECT_EQ(deadlines, std::set<double>{12});
  EXPECT_EQ(twelve.teardown_timeout_s, 12);
  EXPECT_EQ(twelve.hangs.front().cells.front().verdict, "vulnerable reference (7/7 hung)");
  deadlines.clear();
  r.design.teardown_timeout_s = 20;  // --teardown-timeout 20
  FakeExecutor second(script);
  sweep::run(r, &second);
  EXPECT_EQ(deadlines, std::set<double>{20});
  EXPECT_EQ(second.calls().size(), first.calls().size());  // nothing judged at 12 s is reused at 20 s

  // An index written before the deadline was in its keys (the 53-build table's): its cells
  // are reused where the stored run's cell had the deadline asked for, and only there.
  fs::path index;
  for (const auto& f : fs::recursive_directory_iterator(root_))
    if (f.path().filename() == "references.json") index = f.path();
  ASSERT_FALSE(index.empty());
  nlohmann::json keyed = nlohmann::json::parse(std::ifstream(index)), old_style = nlohmann::json::object();
  for (const auto& [key, value] : keyed.items())
    if (key.find("|after=12") != std::string::npos) old_style[key.substr(0, key.find("|after="))] = value;
  ASSERT_FALSE(old_style.empty());
  std::ofstream(index) << old_style.dump(2);
  r.design.teardown_timeout_s = 0;  // the entry's 12 s again
  FakeExecutor third(script);
  const sweep::Result again = sweep::run(r, &third);
  EXPECT_TRUE(third.calls().empty());
  EXPECT_EQ(again.hangs.front().cells.back().verdict, "fixed reference (0/7 hung)");
  std::ofstream(index) << old_style.dump(2);
  r.design.teardown_timeout_s = 20;
  FakeExecutor fourth(script);
  sweep::run(r, &fourth);
  EXPECT_EQ(fourth.calls().size(), first.calls().size());  // judged at 12 s, asked at 20 s: run again
}

// A sweep killed mid-way (a device call's time limit) keeps each cell whose trials had
// all ended: they are entered in the folder's index as they end, not when the run ends.
TEST_F(SweepWithFakeExecutor, AKilledSweepResumesFromTheCellsItFinished) {
  const std::string hangs = (root_ / "vendor/nvidia-nccl-cu12-2.16.5-aaaa/lib/libnccl.so.2").string();
  const std::string clean = (root_ / "vendor/nvidia-nccl-cu12-2.18.3-bbbb/lib/libnccl.so.2").string();
  sweep::Request r = request();
  r.history.clear();
  r.libraries = {hangs, clean};
  r.concurrency = 4 * 7;  // every trial at once: 2.18.3's wait for the others below cannot block them
  const fs::path index = root_ / "out" / "references.json";
  // The child dies in a 2.18.3 trial once the other three cells are in the index.
  EXPECT_EXIT(
      {
        FakeExecutor dies([&](const Cell& cell, int i) {
          if (cell.argv.back().find("2.18.3") != std::string::npos) {
            for (int tries = 0; tries < 400; ++tries) {
              std::ifstream in(index);
              const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
              if (j.is_object() && j.size() >= 3) _exit(9);
              std::this_thread::sleep_for(std::chrono::milliseconds(25));
            }
            _exit(8);
          }
          return script()(cell, i);
        });
        sweep::run(r, &dies);
      },
      ::testing::ExitedWithCode(9), "");
  r.design.reuse_candidates = true;
  FakeExecutor resumed = executor();
  const sweep::Result result = sweep::run(r, &resumed);
  ASSERT_EQ(resumed.calls().size(), 7u);
  for (const auto& [cell, index] : resumed.calls()) EXPECT_EQ(cell, "lib=candidate-02") << index;
  EXPECT_EQ(result.rows[0].decision.verdict, VerdictIs::Vulnerable);
  EXPECT_TRUE(result.vulnerable.reused);
  EXPECT_TRUE(result.fixed.reused);
  EXPECT_EQ(result.rows[1].decision.verdict, VerdictIs::NotAffected);
}

// `--hang A --hang B`: each catalog entry's reproducer in turn over the same libraries,
// its own references (a "wheel:" reference is a swept library), one column per entry.
TEST_F(SweepWithFakeExecutor, OneColumnPerKnownHangEachWithItsOwnReproducer) {
  add_library(root_ / "vendor/nvidia-nccl-cu12-2.17.1-cccc", "2.17.1", "clean");
  add_library(root_ / "vendor/nvidia-nccl-cu12-2.18.1-eeee", "2.18.1", "clean");
  sweep::Request r = request();
  r.history.clear();
  r.libraries = {(root_ / "vendor/nvidia-nccl-cu12-2.16.5-aaaa/lib/libnccl.so.2").string(),
                 (root_ / "vendor/nvidia-nccl-cu12-2.17.1-cccc/lib/libnccl.so.2").string(),
                 (root_ / "vendor/nvidia-nccl-cu12-2.18.1-eeee/lib/libnccl.so.2").string()};
  r.hangs = {"nccl-socket-close-alias", "nccl-launch-blocking-proxy"};
  // Every trial reaches both entries' phases. The socket hang is in 2.16.5 and 2.17.1,
  // the launch-blocking one (two ranks) in 2.16.5 only.
  std::mutex seen_mutex;
  std::vector<std::pair<std::string, std::string>> launch_blocking;  // role, library of the entry's trials
  FakeExecutor fake([&](const Cell& cell, int index) {
    const std::string lib = cell.argv.back();
    const bool two_ranks = std::find(cell.argv.begin(), cell.argv.end(), "--ranks=2") != cell.argv.end();
    if (two_ranks) {
      std::lock_guard<std::mutex> lock(seen_mutex);
      launch_blocking.emplace_back(cell.params.at("role"), lib);
    }
    const bool hangs =
        lib.find("2.16.5") != std::string::npos || (!two_ranks && lib.find("2.17.1") != std::string::npos);
    return trial(cell.id, index, hangs ? Outcome::Hang : Outcome::Passed,
                 {"start", "nccl_loaded", "init_done", "collective_begin", "teardown_begin"});
  });
  const sweep::Result result = sweep::run(r, &fake);
  ASSERT_EQ(result.hangs.size(), 2u);
  EXPECT_EQ(result.hangs[0].id, "nccl-socket-close-alias");
  EXPECT_EQ(result.hangs[1].id, "nccl-launch-blocking-proxy");
  ASSERT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(result.rows[0].facts.release, "2.16.5");
  for (const auto& column : result.hangs) {
    EXPECT_TRUE(column.references_separate) << column.id;
    ASSERT_EQ(column.cells.size(), 3u);
  }
  EXPECT_EQ(result.hangs[0].cells[0].verdict, "vulnerable");
  EXPECT_EQ(result.hangs[0].cells[0].p_vs_fixed, "5.8e-04");
  // A reference's own row names its role and count: judged against itself it says nothing
  // (the 53-build table read its fixed reference "inconclusive" in its own column).
  // 2.16.5 is the launch-blocking hang's vulnerable wheel, 2.17.1 the socket hang's
  // vulnerable one and the launch-blocking hang's fixed one, 2.18.1 the socket hang's fixed one.
  EXPECT_EQ(result.hangs[1].cells[0].verdict, "vulnerable reference (7/7 hung)");
  EXPECT_EQ(result.hangs[1].cells[0].p_vs_fixed, "");
  EXPECT_EQ(result.hangs[0].cells[1].verdict, "vulnerable reference (7/7 hung)");
  EXPECT_EQ(result.hangs[1].cells[1].verdict, "fixed reference (0/7 hung)");
  EXPECT_EQ(result.hangs[0].cells[2].verdict, "fixed reference (0/7 hung)");
  EXPECT_EQ(result.hangs[1].cells[2].verdict, "fixed");
  // Each entry ran its own workload arguments, against the wheels it names. Its references
  // are swept wheels: their candidates' trials serve both, so only the candidates ran.
  EXPECT_EQ(launch_blocking.size(), 3u * 7u);
  for (const auto& [role, lib] : launch_blocking) EXPECT_EQ(role, "candidate") << lib;
  EXPECT_EQ(fake.calls().size(), 2u * 3u * 7u);
  const std::string md = sweep::to_markdown(result);
  EXPECT_NE(md.find("| release | build | nccl-socket-close-alias | nccl-launch-blocking-proxy |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2.16.5 | cu12 | vulnerable (p 5.8e-04 / "), std::string::npos) << md;
  EXPECT_NE(
      md.find("| 2.17.1 | cu12 | vulnerable reference (7/7 hung); bytes: lacks the fix | fixed reference (0/7 hung)"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("- nccl-launch-blocking-proxy: hangs in 2.16.5; first fixed 2.17.1"), std::string::npos) << md;
  const nlohmann::json j = sweep::to_json(result);
  ASSERT_EQ(j["hangs"].size(), 2u);
  EXPECT_EQ(j["hangs"][1]["cells"][0]["verdict"], "vulnerable reference (7/7 hung)");
  // Each cell carries its own entry's counts: what the catalog computes its range from.
  EXPECT_EQ(j["hangs"][1]["cells"][0]["hangs"], 7);
  EXPECT_EQ(j["hangs"][1]["cells"][0]["counted"], 7);
  EXPECT_EQ(j["hangs"][1]["cells"][1]["hangs"], 0);
  EXPECT_THAT(j["hangs"][1]["cells"][1]["source"].get<std::string>(), HasSubstr("run "));
  EXPECT_NE(sweep::to_html(result).find("<table id=\"hangs\">"), std::string::npos);
}

// The catalog's 34-release sweep design: 4 trials per release, 16 per reference. A
// reference that is a swept wheel runs its 16 as that release's row; the others run 4.
TEST_F(SweepWithFakeExecutor, ReferenceTrialsGoToTheWheelsThatAreReferences) {
  add_library(root_ / "vendor/nvidia-nccl-cu12-2.17.1-cccc", "2.17.1", "clean");
  add_library(root_ / "vendor/nvidia-nccl-cu12-2.16.2-dddd", "2.16.2", "clean");
  sweep::Request r = request();
  r.history.clear();
  r.libraries = {(root_ / "vendor/nvidia-nccl-cu12-2.16.2-dddd/lib/libnccl.so.2").string(),
                 (root_ / "vendor/nvidia-nccl-cu12-2.16.5-aaaa/lib/libnccl.so.2").string(),
                 (root_ / "vendor/nvidia-nccl-cu12-2.17.1-cccc/lib/libnccl.so.2").string(),
                 (root_ / "vendor/nvidia-nccl-cu12-2.18.3-bbbb/lib/libnccl.so.2").string()};
  r.hangs = {"nccl-launch-blocking-proxy"};
  r.design.trials = 4;
  r.design.reference_trials = 16;
  FakeExecutor fake([](const Cell& cell, int index) {
    const std::string lib = cell.argv.back();
    const bool hangs = lib.find("2.16.") != std::string::npos;
    return trial(cell.id, index, hangs ? Outcome::Hang : Outcome::Passed,
                 {"start", "nccl_loaded", "init_done", "collective_begin"});
  });
  const sweep::Result result = sweep::run(r, &fake);
  EXPECT_EQ(fake.calls().size(), 4u + 16u + 16u + 4u);
  ASSERT_EQ(result.rows.size(), 4u);
  const std::vector<std::pair<std::string, int>> expected = {
      {"vulnerable", 4}, {"vulnerable", 16}, {"fixed", 16}, {"fixed", 4}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(verdict_text(result.rows[i]), expected[i].first) << result.rows[i].facts.release;
    EXPECT_EQ(result.rows[i].arm.counted(), expected[i].second) << result.rows[i].facts.release;
  }
  EXPECT_EQ(stats::format_p(result.rows[0].decision.vs_fixed), "2.1e-04");
  // The entry hangs after its collective began, and the verdicts say so, not "teardown".
  EXPECT_EQ(result.rows[0].decision.reason,
            "hangs after `collective_begin` 4/4 like the vulnerable reference (16/16), unlike the fixed one (0/16)");
  EXPECT_EQ(result.rows[3].decision.reason.find("teardown"), std::string::npos) << result.rows[3].decision.reason;
  EXPECT_NE(sweep::to_markdown(result).find("4 trials (16 per reference) per library"), std::string::npos);
  EXPECT_EQ(sweep::to_json(result)["trials_per_reference"], 16);
}

// Two ranks per trial: the sweep leaves the number at once to the design (one rank per
// core), as validate does; one rank per trial runs one trial per core.
TEST_F(SweepWithFakeExecutor, SeveralRanksRunOneRankPerCoreAtOnce) {
  sweep::Request r = request();
  r.history.clear();
  r.design.check = validate::Check::Ddp;
  r.design.ranks = 2;
  FakeExecutor fake = executor();
  std::ostringstream log;
  sweep::run(r, &fake, &log);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_NE(log.str().find(fmt::format("{} at once", std::max(1, cores / 2))), std::string::npos) << log.str();
}

// `validate --nccl LIB --hang ID`: one library, the entry's wheel references found in the
// NCCL cache (vendor/nvidia-nccl-cuXX-<release>-<key>/) since they are not swept; they run
// as references, the library as the only row.
TEST_F(SweepWithFakeExecutor, WheelReferencesComeFromTheCacheWhenNotSwept) {
  add_library(root_ / "cache/vendor/nvidia-nccl-cu12-2.16.5-dddd", "2.16.5", "hangs");
  add_library(root_ / "cache/vendor/nvidia-nccl-cu12-2.17.1-eeee", "2.17.1", "clean");
  sweep::Request r = request();
  r.history.clear();
  r.design.reference_dir = (root_ / "cache").string();
  r.libraries = {(root_ / "vendor/nvidia-nccl-cu12-2.18.3-bbbb/lib/libnccl.so.2").string()};
  r.hangs = {"nccl-launch-blocking-proxy"};
  std::mutex seen_mutex;
  std::set<std::string> reference_libraries;
  FakeExecutor fake([&](const Cell& cell, int index) {
    const std::string lib = cell.argv.back();
    if (cell.params.at("role") != "candidate") {
      std::lock_guard<std::mutex> lock(seen_mutex);
      reference_libraries.insert(lib);
    }
    const bool hangs = lib.find("2.16.5") != std::string::npos;
    return trial(cell.id, index, hangs ? Outcome::Hang : Outcome::Passed, {"start", "init_done", "collective_begin"});
  });
  const sweep::Result result = sweep::run(r, &fake);
  ASSERT_EQ(result.rows.size(), 1u);
  ASSERT_EQ(result.hangs.size(), 1u);
  EXPECT_TRUE(result.hangs[0].references_separate);
  EXPECT_EQ(sweep::verdict_word(result.hangs[0].cells[0].verdict), "fixed") << result.hangs[0].cells[0].verdict;
  EXPECT_EQ(reference_libraries.size(), 2u);
  for (const auto& lib : reference_libraries) EXPECT_NE(lib.find("/cache/vendor/"), std::string::npos) << lib;
  // Not in the cache either: the message says how to get it.
  fs::remove_all(root_ / "cache/vendor/nvidia-nccl-cu12-2.17.1-eeee");
  try {
    sweep::run(r, &fake);
    ADD_FAILURE() << "a reference wheel nowhere to be found must be refused";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("hangbench nccl fetch 2.17.1"));
  }
}

// An unknown id is a usage error; an entry that cannot be swept here names its file.
TEST_F(SweepWithFakeExecutor, AnUnknownHangOrAMissingReferenceWheelIsAConfigError) {
  sweep::Request r = request();
  r.hangs = {"no-such-hang"};
  FakeExecutor fake = executor();
  EXPECT_THROW(sweep::run(r, &fake), UsageError);
  r.hangs = {"nccl-launch-blocking-proxy"};  // its 2.17.1 wheel is not among the libraries
  EXPECT_THROW(sweep::run(r, &fake), ConfigError);
  r.hangs = {"mpi-progress-gil"};  // a matrix, not a sweep
  EXPECT_THROW(sweep::run(r, &fake), ConfigError);
  EXPECT_TRUE(fake.calls().empty());
}

TEST(SweepGolden, Markdown) {
  hangbench::testing::expect_matches_golden("sweep.md", sweep::to_markdown(fixed_result()));
}
// The release x known-hang table beneath the rows (sweep --hang A --hang B).
TEST(SweepGolden, MarkdownWithKnownHangColumns) {
  sweep::Result r = fixed_result();
  r.hang = "nccl-socket-close-alias";
  sweep::HangColumn alias{"nccl-socket-close-alias", true, true, "", {}},
      blocking{"nccl-launch-blocking-proxy",
               false,
               true,
               "the references did not separate: this machine did not reproduce nccl-launch-blocking-proxy",
               {}};
  for (const auto& row : r.rows) {
    const bool judged = row.judged();
    alias.cells.push_back({judged ? validate::to_string(row.decision.verdict) : "not run: " + row.problem,
                           judged ? "5.8e-04" : "", judged ? "1" : ""});
    // The entry's own check of the bytes beside its verdict (sweep_run's column_of).
    if (judged)
      alias.cells.back().bytes = row.reading.fix == validate::StaticFix::Present  ? "has the fix"
                                 : row.reading.fix == validate::StaticFix::Absent ? "lacks the fix"
                                                                                  : "cannot tell";
    blocking.cells.push_back({"inconclusive: the references did not separate", "", ""});
  }
  r.hangs = {alias, blocking};
  hangbench::testing::expect_matches_golden("sweep-hangs.md", sweep::to_markdown(r));
}
// `--hang all`: every entry a sweep can run, in catalog order, each once; the usage
// patterns (a matrix, no release references) are left out.
TEST(SweepHangAll, EveryEntryWithAReleaseReproducerOnce) {
  const auto all = sweep::expand_hang_ids({"all"});
  for (const char* id : {"nccl-socket-close-alias", "nccl-launch-blocking-proxy", "nccl-progress-abort-spin",
                         "nccl-net-error-swallowed"})
    EXPECT_NE(std::find(all.begin(), all.end(), id), all.end()) << id;
  EXPECT_EQ(std::find(all.begin(), all.end(), "mpi-progress-gil"), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), "cuda-lazy-load-gil"), all.end());
  const auto named_first = sweep::expand_hang_ids({"nccl-net-error-swallowed", "all"});
  EXPECT_EQ(named_first.front(), "nccl-net-error-swallowed");
  EXPECT_EQ(named_first.size(), all.size());
}

// The table's first lines are computed from its cells: where each entry hangs, the first
// fixed release after that, what was not judged; a repeated reason is one footnote.
TEST(SweepHangTable, SummaryAndFootnotesComeFromTheCells) {
  sweep::Result r;
  for (const char* release : {"2.22.3", "2.23.4", "2.25.1", "2.26.2", "2.28.9"}) {
    sweep::Row one;
    one.facts.release = release;
    r.rows.push_back(one);
  }
  sweep::HangColumn spin{"nccl-progress-abort-spin", true, true, "", {}};
  for (const char* v : {"fixed", "vulnerable", "vulnerable", "fixed", "inconclusive: 2 of 4 trials crashed"})
    spin.cells.push_back({v, "1.2e-04", "1"});
  sweep::HangColumn swallowed{"nccl-net-error-swallowed", true, true, "", {}};
  for (int i = 0; i < 5; ++i) swallowed.cells.push_back({"inconclusive: 2 of 4 trials crashed", "", ""});
  sweep::HangColumn unseparated{"nccl-launch-blocking-proxy",
                                false,
                                false,
                                "no trial of a reference got far enough to hang after `collective_begin`",
                                {}};
  for (int i = 0; i < 5; ++i) unseparated.cells.push_back({"inconclusive: the references did not separate", "", ""});
  r.hangs = {spin, swallowed, unseparated};

  const auto lines = sweep::hang_summary(r);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "nccl-progress-abort-spin: hangs in 2.23.4 to 2.25.1 (2 releases); first fixed 2.26.2; 1 not judged");
  EXPECT_EQ(lines[1], "nccl-net-error-swallowed: hangs in none of the releases judged; 5 not judged");
  EXPECT_EQ(lines[2],
            "nccl-launch-blocking-proxy: not judged on any release (no trial of its references got far enough to "
            "hang on this machine)");

  const sweep::FoldedTable t = sweep::fold_hang_table(r);
  ASSERT_EQ(t.footnotes.size(), 2u);  // one per distinct reason, however many cells give it
  EXPECT_EQ(t.footnotes[0], "[1] 2 of 4 trials crashed");
  EXPECT_EQ(t.cells[4][0], "inconclusive [1]");
  EXPECT_EQ(t.cells[1][0], "vulnerable (p 1.2e-04 / 1)");
  EXPECT_EQ(t.cells[0][2], "not judged [2]");
  EXPECT_EQ(t.footnotes[1], "[2] no trial of a reference got far enough to hang after `collective_begin`");

  const std::string md = sweep::to_markdown(r);
  EXPECT_EQ(md.rfind("# Release × known hang: nccl-progress-abort-spin, nccl-net-error-swallowed, "
                     "nccl-launch-blocking-proxy\n",
                     0),
            0u)
      << md;
  EXPECT_THAT(md, HasSubstr("Legend:"));
  const std::string html = sweep::to_html(r, "");
  EXPECT_THAT(html, HasSubstr("<h1>Release &#215; known hang: nccl-progress-abort-spin"));
  EXPECT_THAT(html, Not(HasSubstr("NCCL teardown hang")));
  const auto json = sweep::to_json(r);
  EXPECT_EQ(json["hang_summary"][0], lines[0]);
  EXPECT_EQ(json["hangs"][0]["cells"][4]["verdict_word"], "inconclusive");
  EXPECT_EQ(json["hangs"][2]["cells"][0]["reason"], unseparated.not_judged_why);
}

// A release of several builds (NVIDIA's cu12 and cu13 wheels of 2.28.3) is one release of
// the span, and its other build is not where the fix arrives; each row names its build.
TEST(SweepHangTable, ABuildOfAReleaseThatHangsIsNotItsFix) {
  sweep::Result r;
  const std::vector<std::pair<std::string, std::string>> builds = {{"2.27.7", "nvidia-nccl-cu12"},
                                                                   {"2.28.3", "nvidia-nccl-cu12"},
                                                                   {"2.28.3", "nvidia-nccl-cu13"},
                                                                   {"2.28.7", "nvidia-nccl-cu12"},
                                                                   {"2.28.7", "nvidia-nccl-cu13"}};
  for (const auto& [release, package] : builds) {
    sweep::Row one;
    one.facts.release = release;
    one.facts.package = package;
    r.rows.push_back(one);
  }
  sweep::HangColumn column{"nccl-net-error-swallowed", true, true, "", {}};
  for (const char* v : {"vulnerable", "vulnerable", "fixed", "fixed", "fixed"})
    column.cells.push_back({v, "0.002", "1"});
  r.hangs = {column};
  EXPECT_EQ(sweep::hang_summary(r).front(),
            "nccl-net-error-swallowed: hangs in 2.27.7 to 2.28.3 (2 releases); first fixed 2.28.7");
  column.cells[2].verdict = "vulnerable";
  r.hangs = {column};
  EXPECT_EQ(sweep::hang_summary(r).front(),
            "nccl-net-error-swallowed: hangs in 2.27.7 to 2.28.3 (2 releases); first fixed 2.28.7");
  const std::string md = sweep::to_markdown(r);
  EXPECT_THAT(md, HasSubstr("| 2.28.3 | cu13 | vulnerable (p 0.002 / 1) |"));
  EXPECT_THAT(sweep::to_html(r, ""), HasSubstr("<td>2.28.3</td><td>cu13</td>"));
  EXPECT_EQ(sweep::to_json(r)["hangs"][0]["cells"][2]["package"], "nvidia-nccl-cu13");
}

// An entry whose reproducer hangs in its collective names that phase, not the teardown.
TEST(SweepMarkdown, PhaseColumnsNameTheEntrysPhase) {
  sweep::Result r = fixed_result();
  r.hang = "nccl-launch-blocking-proxy";
  r.teardown_phase = "collective_begin";
  const std::string md = sweep::to_markdown(r);
  EXPECT_NE(md.find("| hangs after `collective_begin` | 95% interval | stopped before `collective_begin` | crashed "
                    "after `collective_begin` |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("hung after `collective_begin`, fixed"), std::string::npos) << md;
  EXPECT_EQ(md.find("teardown hangs"), std::string::npos) << md;
}
TEST(SweepGolden, Json) {
  hangbench::testing::expect_matches_golden("sweep.json", sweep::to_json(fixed_result()).dump(2) + "\n");
}
TEST(SweepGolden, Html) { hangbench::testing::expect_matches_golden("sweep.html", sweep::to_html(fixed_result())); }

namespace {
size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

// What the Markdown has, the HTML has too (the SHA-256 column), plus a forest plot
// of each judged release's rate and interval and a link to the run of its trials.
TEST(SweepHtml, ShaColumnForestPlotAndRunLinks) {
  const std::string html = sweep::to_html(fixed_result());
  EXPECT_NE(html.find("<th>SHA-256 (as shipped)</th>"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<code title=\"" + std::string(64, 'b') + "\">bbbbbbbbbbbb</code>"), 6u);
  EXPECT_EQ(occurrences(html, "<svg class=\"forest\""), 6u);  // the row that did not run has none
  // 2.16.2 hung 7/7: its dot at 100 %, its interval from 59 % (Clopper-Pearson) to 100 %.
  EXPECT_NE(html.find("aria-label=\"hang rate 7 of 7, 95 % interval [0.59, 1.00]\""), std::string::npos);
  EXPECT_EQ(occurrences(html,
                        "<a href=\"hangbench-out/sweep/20261203-070000-abcd/report.md\" "
                        "title=\"run 20261203-070000-abcd\">report</a>"),
            6u);
  // Written into the sweep's --out with the run folder absolute: the link is relative to the page.
  sweep::Result absolute = fixed_result();
  absolute.run_dir = "/srv/sweeps/runs/20261203-070000-abcd";
  EXPECT_NE(sweep::to_html(absolute, "/srv/sweeps").find("<a href=\"runs/20261203-070000-abcd/report.md\""),
            std::string::npos);
}

namespace {

validate::Result fixed_validate_result() {
  validate::Result r;
  r.inspected.path = "/cache/vendor/nvidia-nccl-cu12-2.16.5/lib/libnccl.so.2";
  r.inspected.version = "2.16.5";
  r.reading.version = "2.16.5";
  r.reading.fix = validate::StaticFix::Absent;
  r.reading.notes = {"ncclSocketClose found; no call to shutdown"};
  r.candidate = tally(validate::Role::Candidate, 7, 7);
  r.vulnerable = tally(validate::Role::Vulnerable, 7, 7);
  r.fixed = tally(validate::Role::Fixed, 0, 7);
  r.decision = validate::decide(r.candidate, r.vulnerable, r.fixed, r.reading, 0.001);
  r.trials = 7;
  r.reference_trials = 7;
  r.alpha = 0.001;
  r.timeout_s = 20;
  r.teardown_phase = "teardown_begin";
  r.teardown_timeout_s = 3;
  r.workload_command = "nccl_teardown --teardown=abort --workers-forked=after";
  r.seconds_to_verdict = 4.2;
  r.run_id = "20261203-070000-abcd";
  r.run_dir = "hangbench-out/validate/20261203-070000-abcd";
  r.argv = {"hangbench", "validate", "--nccl", "libnccl.so.2"};
  r.provenance = fixed_provenance();
  return r;
}

}  // namespace

TEST(ValidateGolden, Markdown) {
  hangbench::testing::expect_matches_golden("validate.md", validate::to_markdown(fixed_validate_result()));
}
TEST(ValidateGolden, Json) {
  hangbench::testing::expect_matches_golden("validate.json", validate::to_json(fixed_validate_result()).dump(2) + "\n");
}
