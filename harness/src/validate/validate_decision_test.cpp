// validate's rule (hangbench/validate.hpp), every combination of what the trials
// show and what the library's bytes say: first pure, with tallies made from trial
// results as the runner returns them; then through validate::run with the fake
// executor, so the design, the tally and the decision are tested together.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "hangbench/executor.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/validate.hpp"
#include "validate/design.hpp"
#include "validate_fixture.hpp"

namespace fs = std::filesystem;
using namespace hangbench;
using namespace hangbench::validate;
using VerdictIs = hangbench::validate::Verdict;

namespace {

using hangbench::testing::kWholeTrial;
using hangbench::testing::trial;

constexpr double kAlpha = 0.001;

// `hangs` teardown hangs then passes, up to `n` trials.
ArmTally arm(Role role, int hangs, int n) {
  std::vector<TrialResult> trials;
  for (int i = 0; i < n; ++i) trials.push_back(trial("c", i, i < hangs ? Outcome::Hang : Outcome::Passed, kWholeTrial));
  ArmTally a;
  a.role = role;
  tally_trials(a, trials, "c", "teardown_begin");
  return a;
}

StaticReading reading(StaticFix fix) {
  StaticReading r;
  r.version = "2.99.0";
  r.fix = fix;
  return r;
}

const ArmTally kVulnerable = arm(Role::Vulnerable, 7, 7);
const ArmTally kFixed = arm(Role::Fixed, 0, 7);

}  // namespace

TEST(ValidateTally, OnlyHangsAfterTheTeardownPhaseAreTeardownHangs) {
  std::vector<TrialResult> trials = {
      trial("c", 0, Outcome::Hang, kWholeTrial),               // teardown hang
      trial("c", 1, Outcome::Hang, {"start", "nccl_loaded"}),  // hung in start-up
      trial("c", 2, Outcome::Crashed, kWholeTrial),            // crashed in the teardown
      trial("c", 3, Outcome::Passed, kWholeTrial),             // healthy
      trial("c", 4, Outcome::Failed, {"start"}),               // failed before the teardown
      trial("c", 5, Outcome::Infra, {}),                       // never ran
      trial("other", 0, Outcome::Hang, kWholeTrial),           // another cell: not counted
  };
  trials[5].infra_error = "workload not found";
  trials[4].metrics["infra_error"] = "ncclCommInitRank: unhandled cuda error";
  ArmTally a;
  tally_trials(a, trials, "c", "teardown_begin");
  EXPECT_EQ(a.teardown_hangs, 1);
  EXPECT_EQ(a.passed, 1);
  EXPECT_EQ(a.teardown_failures, 1);
  EXPECT_EQ(a.before_teardown, 2);
  EXPECT_EQ(a.infra, 1);
  EXPECT_EQ(a.counted(), 3);
  EXPECT_EQ(a.first_infra_error, "workload not found");
  EXPECT_EQ(a.stopped.at("hung in phase 'nccl_loaded'"), 1);
  EXPECT_EQ(a.stopped.at("exited 3 in phase 'start'"), 1);
  ASSERT_EQ(a.stop_reasons.size(), 1u);
  EXPECT_EQ(a.stop_reasons[0], "ncclCommInitRank: unhandled cuda error");
}

TEST(ValidateTally, ATrialTheWorkloadCalledInfraIsAStopWithItsReason) {
  // The executor makes a workload's exit 3 with its infra_error metric INFRA; validate
  // still says what the workload said, and counts it among the stops, not as no run.
  std::vector<TrialResult> trials = {trial("c", 0, Outcome::Infra, {"start"}),
                                     trial("c", 1, Outcome::Infra, kWholeTrial)};
  for (auto& t : trials) {
    t.metrics["infra_error"] = "no CUDA device";
    t.infra_error = "the workload could not run here (exit 3): no CUDA device";
  }
  ArmTally a;
  tally_trials(a, trials, "c", "teardown_begin");
  EXPECT_EQ(a.infra, 0);
  EXPECT_EQ(a.before_teardown, 2);
  EXPECT_EQ(a.counted(), 0);
  EXPECT_EQ(a.stopped.at("could not run in phase 'start'"), 1);
  ASSERT_EQ(a.stop_reasons, std::vector<std::string>{"no CUDA device"});
}

TEST(ValidateTally, WithoutATeardownPhaseEveryTrialCounts) {
  ArmTally a;
  tally_trials(a, {trial("c", 0, Outcome::Hang, {"start"}), trial("c", 1, Outcome::Passed, {})}, "c", "");
  EXPECT_EQ(a.teardown_hangs, 1);
  EXPECT_EQ(a.passed, 1);
  EXPECT_EQ(a.before_teardown, 0);
}

// Hangs like the vulnerable reference: vulnerable whatever the bytes say, and a
// static reading that disagrees is said in words.
TEST(ValidateDecision, HangsLikeTheVulnerableReference) {
  const ArmTally cand = arm(Role::Candidate, 7, 7);
  const Decision absent = decide(cand, kVulnerable, kFixed, reading(StaticFix::Absent), kAlpha);
  EXPECT_EQ(absent.verdict, VerdictIs::Vulnerable);
  EXPECT_TRUE(absent.disagreement.empty());
  EXPECT_NE(absent.reason.find("7/7"), std::string::npos) << absent.reason;
  EXPECT_EQ(exit_code_of(absent.verdict), 1);

  const Decision present = decide(cand, kVulnerable, kFixed, reading(StaticFix::Present), kAlpha);
  EXPECT_EQ(present.verdict, VerdictIs::Vulnerable);
  EXPECT_NE(present.disagreement.find("calls shutdown(), yet the teardown hangs"), std::string::npos);

  const Decision unknown = decide(cand, kVulnerable, kFixed, reading(StaticFix::Unknown), kAlpha);
  EXPECT_EQ(unknown.verdict, VerdictIs::Vulnerable);
  EXPECT_NE(unknown.disagreement.find("could not tell"), std::string::npos);
}

// Does not hang: the bytes decide which true thing is said. "Does not hang" and
// "has the fix" are different facts (issue 15's first wrong verdict).
TEST(ValidateDecision, DoesNotHangAndCallsShutdownIsFixed) {
  const Decision d = decide(arm(Role::Candidate, 0, 7), kVulnerable, kFixed, reading(StaticFix::Present), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Fixed);
  EXPECT_EQ(to_string(d.verdict), "fixed");
  EXPECT_TRUE(d.disagreement.empty());
  EXPECT_EQ(exit_code_of(d.verdict), 0);
}

TEST(ValidateDecision, DoesNotHangWithoutTheFixIsNotAffectedNeverFixed) {
  const Decision d = decide(arm(Role::Candidate, 0, 7), kVulnerable, kFixed, reading(StaticFix::Absent), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::NotAffected);
  EXPECT_EQ(to_string(d.verdict), "not affected");
  EXPECT_NE(d.reason.find("never calls shutdown()"), std::string::npos) << d.reason;
  EXPECT_EQ(exit_code_of(d.verdict), 0);
}

// sweep --hang of a catalog entry whose mechanism is not the socket teardown: the
// library's shutdown() reading decides nothing, the trials alone do.
TEST(ValidateDecision, WhenTheSocketReadingDoesNotApplyTheTrialsAloneDecide) {
  StaticReading absent = reading(StaticFix::Absent);
  absent.applies = false;
  const Decision healthy = decide(arm(Role::Candidate, 0, 7), kVulnerable, kFixed, absent, kAlpha);
  EXPECT_EQ(healthy.verdict, VerdictIs::Fixed);
  EXPECT_EQ(healthy.reason.find("shutdown()"), std::string::npos) << healthy.reason;
  StaticReading present = reading(StaticFix::Present);
  present.applies = false;
  const Decision hangs = decide(arm(Role::Candidate, 7, 7), kVulnerable, kFixed, present, kAlpha);
  EXPECT_EQ(hangs.verdict, VerdictIs::Vulnerable);
  EXPECT_TRUE(hangs.disagreement.empty()) << hangs.disagreement;
}

TEST(ValidateDecision, StrippedLibraryThatDoesNotHangIsNotVulnerableAndSaysWhy) {
  const Decision d = decide(arm(Role::Candidate, 0, 7), kVulnerable, kFixed, reading(StaticFix::Unknown), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::NotVulnerable);
  EXPECT_NE(d.disagreement.find("stripped"), std::string::npos) << d.disagreement;
  EXPECT_EQ(exit_code_of(d.verdict), 0);
}

// Issue 15's second wrong verdict: 7 start-up hangs are not 7 teardown hangs.
TEST(ValidateDecision, TrialsThatStopBeforeTheTeardownAreInconclusiveWithPhaseAndReason) {
  std::vector<TrialResult> trials;
  for (int i = 0; i < 7; ++i) trials.push_back(trial("c", i, Outcome::Hang, {"start", "nccl_loaded"}));
  ArmTally cand;
  tally_trials(cand, trials, "c", "teardown_begin");
  StaticReading r = reading(StaticFix::Absent);
  r.gpu_code_problem = "no code for sm_90: .nv_fatbin holds SASS for sm_35 ... sm_80 and no PTX";
  const Decision d = decide(cand, kVulnerable, kFixed, r, kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_EQ(exit_code_of(d.verdict), 3);
  EXPECT_NE(d.reason.find("7 hung in phase 'nccl_loaded'"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("did not initialise on this GPU: no code for sm_90"), std::string::npos) << d.reason;
}

TEST(ValidateDecision, ReferencesThatDoNotSeparateDecideNothing) {
  const Decision d =
      decide(arm(Role::Candidate, 7, 7), arm(Role::Vulnerable, 1, 7), kFixed, reading(StaticFix::Absent), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_FALSE(d.references_separate);
  EXPECT_NE(d.reason.find("references do not separate"), std::string::npos) << d.reason;
}

TEST(ValidateDecision, ReferencesThatNeverGotFarEnoughAreNotCalledUnseparated) {
  // On a machine without a GPU every reference trial stops before the phase: that is
  // no evidence that the machine does not reproduce the hang.
  std::vector<TrialResult> stopped;
  for (int i = 0; i < 7; ++i) {
    stopped.push_back(trial("c", i, Outcome::Infra, {"start"}));
    stopped.back().metrics["infra_error"] = "no CUDA device";
  }
  ArmTally vulnerable, fixed;
  tally_trials(vulnerable, stopped, "c", "teardown_begin");
  TrialResult never = trial("c", 0, Outcome::Infra, {});
  never.infra_error = "fork failed";
  tally_trials(fixed, {never}, "c", "teardown_begin");
  const Decision d = decide(arm(Role::Candidate, 0, 7), vulnerable, fixed, reading(StaticFix::Present), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_FALSE(d.references_reached_phase);
  EXPECT_EQ(d.reason,
            "no trial of a reference got far enough to hang in the teardown, so nothing can be judged on this machine "
            "(the vulnerable reference: 7 of 7 trials stopped before the teardown began (7 could not run in phase "
            "'start'); the workload said: no CUDA device; the fixed reference: no trial could run: fork failed)");
  EXPECT_EQ(references_not_run(kVulnerable, kFixed), "");
  EXPECT_TRUE(decide(arm(Role::Candidate, 7, 7), kVulnerable, kFixed, reading(StaticFix::Absent), kAlpha)
                  .references_reached_phase);
}

TEST(ValidateDecision, ReversedReferencesDoNotSeparate) {
  // The "fixed" build hangs and the "vulnerable" one does not: p is small, the direction wrong.
  const Decision d = decide(arm(Role::Candidate, 0, 7), arm(Role::Vulnerable, 0, 7), arm(Role::Fixed, 7, 7),
                            reading(StaticFix::Present), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_FALSE(d.references_separate);
}

TEST(ValidateDecision, CrashesInTheTeardownAreInconclusive) {
  std::vector<TrialResult> trials;
  for (int i = 0; i < 7; ++i) trials.push_back(trial("c", i, i < 2 ? Outcome::Crashed : Outcome::Passed, kWholeTrial));
  ArmTally cand;
  tally_trials(cand, trials, "c", "teardown_begin");
  const Decision d = decide(cand, kVulnerable, kFixed, reading(StaticFix::Present), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_NE(d.reason.find("2 of 7 trials crashed or failed during the teardown"), std::string::npos) << d.reason;
}

TEST(ValidateDecision, APartialHangRateUnlikeBothReferencesIsInconclusive) {
  const Decision d = decide(arm(Role::Candidate, 20, 40), arm(Role::Vulnerable, 40, 40), arm(Role::Fixed, 0, 40),
                            reading(StaticFix::Absent), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_NE(d.reason.find("unlike both references"), std::string::npos) << d.reason;
}

TEST(ValidateDecision, TooFewTrialsToSeparateAskForMore) {
  const Decision d = decide(arm(Role::Candidate, 2, 7), kVulnerable, kFixed, reading(StaticFix::Absent), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_NE(d.reason.find("more trials"), std::string::npos) << d.reason;
}

TEST(ValidateDecision, NoTrialThatRanIsInconclusiveWithTheHarnessError) {
  ArmTally cand;
  TrialResult t = trial("c", 0, Outcome::Infra, {});
  t.infra_error = "cannot exec the workload";
  tally_trials(cand, {t}, "c", "teardown_begin");
  const Decision d = decide(cand, kVulnerable, kFixed, reading(StaticFix::Present), kAlpha);
  EXPECT_EQ(d.verdict, VerdictIs::Inconclusive);
  EXPECT_NE(d.reason.find("cannot exec the workload"), std::string::npos) << d.reason;
}

// The same rule through validate::run: the design's cells, the fake executor's
// trials, the tally and the decision, with no process and no GPU.
class ValidateWithFakeExecutor : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("hb_vfake_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (const char* variant : {"2.17.1", "2.17.1+backport"}) {
      fs::create_directories(root_ / "refs" / variant / "lib");
      fs::copy_file(FAKE_NCCL_PATH, root_ / "refs" / variant / "lib" / "libnccl.so.2");
      std::ofstream(root_ / "refs" / variant / "lib" / "libnccl.so.2", std::ios::app) << variant;
    }
    fs::copy_file(FAKE_NCCL_PATH, root_ / "candidate.so");
    std::ofstream(root_ / "workload") << "#!/bin/sh\n";  // exists; the fake executor never runs it
  }
  void TearDown() override { fs::remove_all(root_); }

  Request request() const {
    Request r;
    r.library = (root_ / "candidate.so").string();
    r.reference_dir = (root_ / "refs").string();
    r.workload = (root_ / "workload").string();
    r.out_dir = (root_ / "out").string();
    r.trials = 7;
    return r;
  }
  fs::path root_;
};

TEST_F(ValidateWithFakeExecutor, EachCandidateBehaviourGetsItsVerdict) {
  struct Case {
    const char* name;
    Outcome outcome;
    std::vector<std::string> phases;
    VerdictIs expected;
  };
  // The stand-in library's static reading is "absent" (no shutdown import).
  const std::vector<Case> cases = {
      {"teardown hang", Outcome::Hang, kWholeTrial, VerdictIs::Vulnerable},
      {"clean teardown", Outcome::Passed, kWholeTrial, VerdictIs::NotAffected},
      {"start-up hang", Outcome::Hang, {"start", "nccl_loaded"}, VerdictIs::Inconclusive},
      {"crash in teardown", Outcome::Crashed, kWholeTrial, VerdictIs::Inconclusive},
  };
  for (const Case& c : cases) {
    FakeExecutor fake([&](const Cell& cell, int index) {
      const std::string role = cell.params.at("role");
      if (role == "vulnerable") return trial(cell.id, index, Outcome::Hang, kWholeTrial);
      if (role == "fixed") return trial(cell.id, index, Outcome::Passed, kWholeTrial);
      return trial(cell.id, index, c.outcome, c.phases);
    });
    Request r = request();
    r.no_reuse = true;
    const Result result = run(r, &fake);
    EXPECT_EQ(result.decision.verdict, c.expected) << c.name << ": " << result.decision.reason;
    EXPECT_EQ(result.vulnerable.teardown_hangs, 7) << c.name;
    EXPECT_EQ(result.fixed.passed, 7) << c.name;
    EXPECT_EQ(fake.calls().size(), 21u) << c.name;  // 7 trials of each of the three libraries
  }
}

// Validating the fixed reference's own bytes: its trials serve as both the candidate and
// the fixed reference (14 trials, not 21), and the references are still compared.
TEST_F(ValidateWithFakeExecutor, ACandidateWithAReferencesBytesRunsOnceForBoth) {
  FakeExecutor fake([](const Cell& cell, int index) {
    return trial(cell.id, index, cell.params.at("role") == "vulnerable" ? Outcome::Hang : Outcome::Passed, kWholeTrial);
  });
  Request r = request();
  r.no_reuse = true;
  r.library = (root_ / "refs" / "2.17.1+backport" / "lib" / "libnccl.so.2").string();
  const Result result = run(r, &fake);
  EXPECT_EQ(fake.calls().size(), 14u);
  EXPECT_EQ(result.fixed.shared_candidate, 0);
  EXPECT_EQ(result.fixed.passed, 7);
  EXPECT_EQ(result.vulnerable.shared_candidate, -1);
  EXPECT_EQ(result.vulnerable.teardown_hangs, 7);
  EXPECT_TRUE(result.decision.references_separate);
  EXPECT_EQ(result.decision.verdict, VerdictIs::NotAffected) << result.decision.reason;
}

// --reference-trials: 4 trials of the library against 16 of each reference still
// decides at alpha 0.001 (p = 2.1e-4), and the reference index remembers the 16.
TEST_F(ValidateWithFakeExecutor, MoreReferenceTrialsDecideWithFewerLibraryTrials) {
  FakeExecutor fake([](const Cell& cell, int index) {
    return trial(cell.id, index, cell.params.at("role") == "candidate" ? Outcome::Hang : Outcome::Passed, kWholeTrial);
  });
  Request r = request();
  r.trials = 4;
  r.reference_trials = 16;
  const Result result = run(r, &fake);
  EXPECT_EQ(fake.calls().size(), 4u + 16u + 16u);
  EXPECT_EQ(result.candidate.counted(), 4);
  EXPECT_EQ(result.fixed.counted(), 16);
  EXPECT_EQ(result.reference_trials, 16);
  EXPECT_LT(result.decision.vs_fixed.p_two_sided, 0.001);
  EXPECT_EQ(to_json(result)["trials_per_reference"], 16);
  // The next run with the same reference count reuses both references.
  const Result again = run(r, &fake);
  EXPECT_TRUE(again.fixed.reused);
  EXPECT_EQ(fake.calls().size(), 36u + 4u);
  // A different count is another design: its references run again.
  r.reference_trials = 20;
  const Result other = run(r, &fake);
  EXPECT_FALSE(other.fixed.reused);
}

// A design that could not reach alpha even at its cleanest split is refused before a
// trial runs, with the numbers that would reach it.
TEST_F(ValidateWithFakeExecutor, ADesignThatCannotReachAlphaIsAUsageError) {
  FakeExecutor fake([](const Cell& cell, int index) { return trial(cell.id, index, Outcome::Passed, kWholeTrial); });
  Request r = request();
  r.trials = 3;
  try {
    run(r, &fake);
    FAIL() << "3 against 3 cannot reach alpha 0.001";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("raise --trials or --reference-trials"), std::string::npos) << e.what();
  }
  r.reference_trials = 100;  // 3/3 against 0/100 reaches it, but the references 100 vs 100 also must
  EXPECT_NO_THROW(run(r, &fake));
  EXPECT_EQ(fake.calls().size(), 3u + 100u + 100u);
}

TEST_F(ValidateWithFakeExecutor, ReferencesAreReusedFromTheStoreTheSecondTime) {
  FakeExecutor fake([](const Cell& cell, int index) {
    return trial(cell.id, index, cell.params.at("role") == "vulnerable" ? Outcome::Hang : Outcome::Passed, kWholeTrial);
  });
  run(request(), &fake);
  const size_t first = fake.calls().size();
  const Result second = run(request(), &fake);
  EXPECT_EQ(fake.calls().size() - first, 7u);  // only the candidate ran again
  EXPECT_TRUE(second.vulnerable.reused);
  EXPECT_TRUE(second.fixed.reused);
  EXPECT_EQ(second.decision.verdict, VerdictIs::NotAffected);
}

// Issue 26: a vendor library judged across ranks. Every cell (the candidate and
// both references) runs under mpirun with the ranks asked for, each rank placed on
// the shared GPU, and the references of a 2-rank design are not those of 1 rank.
TEST_F(ValidateWithFakeExecutor, RanksRunEveryLibraryUnderMpirunWithItsPlacement) {
  std::mutex seen_mutex;
  std::vector<Cell> seen;
  FakeExecutor fake([&](const Cell& cell, int index) {
    {
      std::lock_guard lock(seen_mutex);
      seen.push_back(cell);
    }
    return trial(cell.id, index, cell.params.at("role") == "vulnerable" ? Outcome::Hang : Outcome::Passed, kWholeTrial);
  });
  run(request(), &fake);  // one rank: these references must not be reused below
  seen.clear();
  Request r = request();
  r.check = Check::Ddp;
  r.ranks = 2;
  const Result result = run(r, &fake);
  EXPECT_FALSE(result.vulnerable.reused);
  EXPECT_FALSE(result.fixed.reused);
  ASSERT_EQ(seen.size(), 21u);
  for (const Cell& c : seen) {
    EXPECT_EQ(c.launcher.kind, LauncherKind::Mpirun) << c.id;
    EXPECT_EQ(c.launcher.ranks, 2) << c.id;
    EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "--placement=shared-gpu"), c.argv.end()) << c.id;
  }
  EXPECT_NE(result.workload_command.find("--placement=shared-gpu"), std::string::npos) << result.workload_command;
}

TEST_F(ValidateWithFakeExecutor, RanksNeedTheDdpCheckAndAKnownPlacement) {
  FakeExecutor fake([](const Cell& cell, int index) { return trial(cell.id, index, Outcome::Passed, kWholeTrial); });
  Request teardown = request();
  teardown.ranks = 2;
  EXPECT_THROW(run(teardown, &fake), UsageError);
  Request bad_placement = request();
  bad_placement.check = Check::Ddp;
  bad_placement.ranks = 2;
  bad_placement.placement = "one-gpu";
  EXPECT_THROW(run(bad_placement, &fake), UsageError);
  EXPECT_TRUE(fake.calls().empty());
}

// One rank: every trial at once (the teardown check's time to verdict); several ranks
// per trial: at most one rank per core, unless --concurrency says otherwise.
TEST(ValidateDesign, TrialsAtOnceKeepOneRankPerCoreForSeveralRanks) {
  EXPECT_EQ(trials_at_once(21, 0, 1, 16), 21);
  EXPECT_EQ(trials_at_once(21, 0, 2, 16), 8);
  EXPECT_EQ(trials_at_once(21, 0, 4, 16), 4);
  EXPECT_EQ(trials_at_once(21, 0, 4, 2), 1);
  EXPECT_EQ(trials_at_once(6, 0, 2, 16), 6);
  EXPECT_EQ(trials_at_once(21, 12, 2, 16), 12);
  EXPECT_EQ(trials_at_once(21, 40, 1, 16), 21);
}
