// `hangbench validate` end to end on the CPU: the real CLI, the real runner and
// store, stand-in NCCL libraries (workloads/ddp_abort/test_support) and a fake
// workload script that hangs over the "vulnerable" libraries, like ddp_abort
// over NCCL 2.17.1 with workers forked after init.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "hangbench/store.hpp"

namespace fs = std::filesystem;

namespace {

class ValidateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("hb_validate_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (const char* place :
         {"refs/2.17.1/lib", "refs/2.17.1+backport/lib", "cand-hangs", "cand-fixed", "cand-early"}) {
      fs::create_directories(root_ / place);
    }
    for (const char* lib : {"refs/2.17.1/lib/libnccl.so.2", "refs/2.17.1+backport/lib/libnccl.so.2",
                            "cand-hangs/libnccl.so.2", "cand-fixed/libnccl.so.2", "cand-early/libnccl.so.2"}) {
      fs::copy_file(FAKE_NCCL_PATH, root_ / lib);
      // Distinct bytes per file (ELF ignores trailing data): references are keyed by SHA-256.
      std::ofstream(root_ / lib, std::ios::app) << lib;
    }
    workload_ = root_ / "fake_ddp_abort.sh";
    std::ofstream(workload_)
        << "#!/bin/sh\n"
           "for a in \"$@\"; do case \"$a\" in --nccl-lib=*) lib=\"${a#--nccl-lib=}\";; esac; done\n"
           // A library that never initialises (no code for this GPU, say) stops in start-up.
           "case \"$lib\" in */cand-early/*) [ -n \"$HANGBENCH_PHASE_FILE\" ] && echo "
           "\"{\\\"phase\\\":\\\"nccl_loaded\\\",\\\"t\\\":$(date +%s.%N)}\" >> \"$HANGBENCH_PHASE_FILE\"; "
           "exec sleep 60;; esac\n"
           // The teardown phase, as ddp_abort reports it (workloads/common/phase.hpp).
           "[ -n \"$HANGBENCH_PHASE_FILE\" ] && echo \"{\\\"phase\\\":\\\"teardown_begin\\\","
           "\\\"t\\\":$(date +%s.%N),\\\"pid\\\":$$}\" >> \"$HANGBENCH_PHASE_FILE\"\n"
           "case \"$lib\" in */2.17.1/*|*/cand-hangs/*) exec sleep 60;; esac\n"
           "exit 0\n";
    fs::permissions(workload_, fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs hangbench validate with the common options; returns its exit code.
  int validate(const std::string& candidate, const std::string& extra = "") {
    const std::string command = std::string(HB_BINARY_DIR) + "/harness/hangbench validate --nccl " + candidate +
                                " --reference-dir " + (root_ / "refs").string() + " --workload " + workload_.string() +
                                " --trials 6 --alpha 0.01 --out " + (root_ / "out").string() + " --json " +
                                (root_ / "verdict.json").string() + " " + extra + " > " +
                                (root_ / "stdout.txt").string() + " 2>&1";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  nlohmann::json verdict() {
    std::ifstream in(root_ / "verdict.json");
    return nlohmann::json::parse(in);
  }
  std::string output() {
    std::ifstream in(root_ / "stdout.txt");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path root_, workload_;
};

}  // namespace

// The stand-in library's ncclSocketClose never calls shutdown(): a library that does
// not hang without the fix is "not affected", never "fixed" (issue 15).
TEST_F(ValidateCommand, LibraryThatDoesNotHangWithoutTheFixIsNotAffected) {
  ASSERT_EQ(validate((root_ / "cand-fixed/libnccl.so.2").string(), "--timeout 3"), 0) << output();
  nlohmann::json v = verdict();
  EXPECT_EQ(v["static"]["socket_close_calls_shutdown"], "absent");
  EXPECT_EQ(v["verdict"], "not affected");
  EXPECT_EQ(v["arms"][0]["teardown_hangs"], 0);
  EXPECT_EQ(v["arms"][1]["teardown_hangs"], 6);
  EXPECT_EQ(v["arms"][2]["teardown_hangs"], 0);
  EXPECT_LT(v["candidate_vs_vulnerable"]["p_two_sided"].get<double>(), 0.01);
}

TEST_F(ValidateCommand, LibraryThatHangsGetsVulnerableAndReusesTheReferences) {
  ASSERT_EQ(validate((root_ / "cand-fixed/libnccl.so.2").string(), "--timeout 3"), 0) << output();
  // Second library: the references come from the store, the timeout from the fixed one's healthy runs.
  ASSERT_EQ(validate((root_ / "cand-hangs/libnccl.so.2").string()), 1) << output();
  nlohmann::json v = verdict();
  EXPECT_EQ(v["verdict"], "vulnerable");
  EXPECT_EQ(v["arms"][0]["teardown_hangs"], 6);
  EXPECT_TRUE(v["arms"][1]["reused"].get<bool>());
  EXPECT_TRUE(v["arms"][2]["reused"].get<bool>());
  EXPECT_LT(v["hang_timeout_s"].get<double>(), 20.0);  // learned, not the default
  // The teardown deadline too: healthy teardowns here take milliseconds, so the floor.
  EXPECT_EQ(v["teardown_phase"], "teardown_begin");
  EXPECT_DOUBLE_EQ(v["teardown_timeout_s"].get<double>(), 2.0);
}

// A hang is called once the trial outlives its teardown deadline, long before
// the whole-trial timeout; without a teardown phase only the latter applies.
TEST_F(ValidateCommand, TeardownDeadlineCallsTheHangBeforeTheTrialTimeout) {
  ASSERT_EQ(validate((root_ / "cand-hangs/libnccl.so.2").string(), "--timeout 40 --teardown-timeout 1"), 1) << output();
  nlohmann::json v = verdict();
  EXPECT_EQ(v["verdict"], "vulnerable");
  EXPECT_DOUBLE_EQ(v["teardown_timeout_s"].get<double>(), 1.0);
  // Every hang was called by the teardown deadline, none by the 40 s trial timeout.
  const fs::path store_path = fs::path(v["run_dir"].get<std::string>()) / "hangbench.sqlite";
  ASSERT_TRUE(fs::exists(store_path)) << store_path;
  const hangbench::Store store = hangbench::Store::open(store_path.string());
  const std::optional<std::string> run = store.latest_run();  // the folder's one run
  ASSERT_TRUE(run.has_value()) << store_path;
  int hangs = 0;
  for (const auto& trial : store.load_run(*run).trials) {
    if (trial.outcome != hangbench::Outcome::Hang) continue;
    ++hangs;
    ASSERT_TRUE(trial.harness.hang_deadline.has_value()) << trial.cell_id << " #" << trial.index;
    EXPECT_EQ(trial.harness.hang_deadline->phase, "teardown_begin") << trial.cell_id << " #" << trial.index;
    EXPECT_DOUBLE_EQ(trial.harness.hang_deadline->seconds, 1.0) << trial.cell_id << " #" << trial.index;
    EXPECT_EQ(trial.harness.hang_deadline->learned, "") << trial.cell_id << " #" << trial.index;
  }
  EXPECT_EQ(hangs, 12) << "the candidate's 6 and the vulnerable reference's 6";
  EXPECT_NE(output().find("or 1.0 s after teardown_begin"), std::string::npos) << output();
}

// With the references run afresh, the fixed one's healthy teardowns teach the
// deadline in the same run: once they have all ended, the hangs still waiting
// are called at the learned deadline, and their record says so.
TEST_F(ValidateCommand, AFreshFixedReferenceLowersTheTeardownDeadlineInTheSameRun) {
  // --check ddp: a default teardown deadline of 5 s, far above the learned floor of 2 s.
  ASSERT_EQ(validate((root_ / "cand-hangs/libnccl.so.2").string(), "--check ddp --timeout 40 --no-reuse"), 1)
      << output();
  nlohmann::json v = verdict();
  EXPECT_EQ(v["verdict"], "vulnerable");
  EXPECT_DOUBLE_EQ(v["teardown_timeout_s"].get<double>(), 5.0);
  ASSERT_TRUE(v.contains("teardown_timeout_learned_s")) << v.dump(2);
  EXPECT_DOUBLE_EQ(v["teardown_timeout_learned_s"].get<double>(), 2.0);  // healthy teardowns take milliseconds
  hangbench::Store store =
      hangbench::Store::open((fs::path(v["run_dir"].get<std::string>()) / "hangbench.sqlite").string());
  int learned_hangs = 0;
  for (const auto& t : store.load_run(v["run_id"].get<std::string>()).trials) {
    if (t.outcome != hangbench::Outcome::Hang) continue;
    ASSERT_TRUE(t.harness.hang_deadline.has_value()) << t.cell_id << " #" << t.index;
    const hangbench::HangDeadline& deadline = *t.harness.hang_deadline;
    EXPECT_EQ(deadline.phase, "teardown_begin") << t.cell_id << " #" << t.index;
    EXPECT_DOUBLE_EQ(deadline.seconds, 2.0) << t.cell_id << " #" << t.index;
    EXPECT_EQ(deadline.learned.rfind("learned from the fixed reference's 6 healthy teardowns", 0), 0u)
        << t.cell_id << " #" << t.index << ": " << deadline.learned;
    ++learned_hangs;
  }
  EXPECT_EQ(learned_hangs, 12);  // the candidate's 6 and the vulnerable reference's 6
  EXPECT_NE(output().find("lowered to 2.0 s"), std::string::npos) << output();
}

TEST_F(ValidateCommand, EmptyTeardownPhaseLeavesOnlyTheTrialTimeout) {
  ASSERT_EQ(validate((root_ / "cand-fixed/libnccl.so.2").string(), "--timeout 3 --teardown-phase ''"), 0) << output();
  nlohmann::json v = verdict();
  EXPECT_DOUBLE_EQ(v["teardown_timeout_s"].get<double>(), 0.0);
  EXPECT_EQ(output().find("after teardown_begin"), std::string::npos) << output();
  EXPECT_GE(v["seconds_to_verdict"].get<double>(), 3.0);  // the vulnerable reference ran to the timeout
}

TEST_F(ValidateCommand, ReferencesThatDoNotSeparateGiveInconclusive) {
  // Both references "fixed": nothing can be concluded, whatever the candidate does.
  ASSERT_EQ(validate((root_ / "cand-fixed/libnccl.so.2").string(), "--timeout 3 --vulnerable 2.17.1+backport"), 3)
      << output();
  EXPECT_EQ(verdict()["verdict"], "inconclusive");
}

TEST_F(ValidateCommand, FileThatIsNotNcclIsAUsageError) {
  std::ofstream(root_ / "not-nccl.so") << "plain text\n";
  EXPECT_EQ(validate((root_ / "not-nccl.so").string(), "--timeout 3"), 2) << output();
}

TEST_F(ValidateCommand, MissingReferenceIsAUsageErrorThatSaysWhatToBuild) {
  fs::remove_all(root_ / "refs/2.17.1");
  EXPECT_EQ(validate((root_ / "cand-fixed/libnccl.so.2").string(), "--timeout 3"), 2);
  EXPECT_NE(output().find("hangbench nccl build"), std::string::npos) << output();
}

// A trial that hangs before the teardown says nothing about it: the vulnerable
// reference's 6/6 must not be matched by 6 start-up hangs (issue 15, cu11 2.14.3).
TEST_F(ValidateCommand, HangsBeforeTheTeardownAreInconclusiveWithThePhase) {
  ASSERT_EQ(validate((root_ / "cand-early/libnccl.so.2").string(), "--timeout 2"), 3) << output();
  nlohmann::json v = verdict();
  EXPECT_EQ(v["verdict"], "inconclusive");
  EXPECT_EQ(v["arms"][0]["teardown_hangs"], 0);
  EXPECT_EQ(v["arms"][0]["before_teardown"], 6);
  EXPECT_NE(v["reason"].get<std::string>().find("phase 'nccl_loaded'"), std::string::npos) << v["reason"];
}
