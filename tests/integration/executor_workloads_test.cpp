// The real ProcessExecutor against the test workloads: every behaviour gets its
// outcome, nothing of a trial survives, cleanup escalates to SIGKILL when needed,
// and the hang evidence names the grandchild that holds the connection.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "exec/proc_scan.hpp"
#include "hangbench/evidence.hpp"
#include "hangbench/executor.hpp"
#include "hangbench/matrix.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

std::string workload(const std::string& name) {
  return std::string(HB_BINARY_DIR) + "/workloads/test_workloads/hb_test_" + name;
}

bool process_alive(int pid) {
  auto st = exec_detail::read_proc_stat(pid);
  return st && st->state != 'Z';
}

// Every live process whose environment carries the trial's tag.
std::vector<int> tagged_processes(const std::string& trial_id) {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid > 0 && pid != ::getpid() && exec_detail::environ_contains(pid, "HANGBENCH_TRIAL_ID=" + trial_id)) {
      out.push_back(pid);
    }
  }
  return out;
}

// Does any object below a "holders*" key of the evidence JSON carry this pid?
bool names_holder(const nlohmann::json& j, int pid, bool under_holders = false) {
  if (j.is_object()) {
    if (under_holders && j.contains("pid") && j["pid"] == pid) return true;
    for (auto& [k, v] : j.items()) {
      if (names_holder(v, pid, under_holders || k.find("holder") != std::string::npos)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (names_holder(v, pid, under_holders)) return true;
    }
  }
  return false;
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_dir_ = fs::temp_directory_path() / ("hb_exec_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(run_dir_);
    fs::create_directories(run_dir_);
  }
  void TearDown() override { fs::remove_all(run_dir_); }

  Cell cell(const std::string& name, std::vector<std::string> extra = {}, double timeout = 1.0) {
    Cell c;
    c.id = "w=" + name;
    c.argv = {workload(name)};
    c.argv.insert(c.argv.end(), extra.begin(), extra.end());
    c.timeout_s = timeout;
    if (!fs::exists(c.argv[0])) ADD_FAILURE() << "missing test workload " << c.argv[0] << " (build hb_test_workloads)";
    return c;
  }

  // Runs one trial with a known tag; checks the common promises of every trial.
  TrialResult run(const Cell& c, double grace = 0.3) {
    TrialContext ctx;
    ctx.run_dir = run_dir_.string();
    ctx.trial_id = "hbtest-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++);
    ctx.grace_s = grace;
    ctx.warn = [this](const std::string& w) { warnings_.push_back(w); };
    ctx.provenance = std::make_shared<const nlohmann::json>(nlohmann::json{{"host", "test-host"}});
    // No bound on how long it takes: an executor that fails to end a trial hangs
    // the test, and ctest's timeout turns that into a failure.
    TrialResult r = executor_.run(c, 0, ctx);
    EXPECT_TRUE(r.survivors.empty()) << c.id;
    EXPECT_TRUE(tagged_processes(ctx.trial_id).empty()) << c.id << ": a process of the trial survived";
    return r;
  }

  // No run id in the context: trials/norun/<cell name>-<hash of its id>/<index>.
  fs::path trial_dir(const Cell& c) { return run_dir_ / "trials" / "norun" / cell_folder_name(c.id) / "0"; }

  ProcessExecutor executor_{diagnose::make_hang_capture()};
  fs::path run_dir_;
  int counter_ = 0;
  std::vector<std::string> warnings_;
};

TEST_F(ExecutorTest, PassingWorkloadPassesWithPhasesAndMetrics) {
  Cell c = cell("pass", {"--ms=20"});
  TrialResult r = run(c);
  EXPECT_EQ(r.outcome, Outcome::Passed);
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.phases.size(), 4u);
  EXPECT_EQ(r.phases[0].name, "init_done");
  EXPECT_EQ(r.phases[3].name, "teardown_end");
  EXPECT_GT(r.phases[0].pid, 0);
  EXPECT_EQ(r.metrics.at("steps"), 3.0);
  EXPECT_EQ(r.harness.cleanup, CleanupStep::None);
  EXPECT_TRUE(r.hung_phase.empty());
  EXPECT_TRUE(fs::exists(trial_dir(c) / "stdout.log"));
  EXPECT_TRUE(fs::exists(trial_dir(c) / "stderr.log"));
  EXPECT_TRUE(fs::exists(trial_dir(c) / "phases.jsonl"));
  if (executor_.pid_namespaces()) {
    // The workload ran as pid 2 of its own namespace; its phase lines name it by its host pid.
    EXPECT_TRUE(r.harness.pid_namespace);
    EXPECT_NE(r.phases[0].pid, 2);
    EXPECT_TRUE(r.harness.unmapped_namespace_pids.empty());
  }
}

// A phase-relative timeout ends the wait long before the trial's own timeout and
// names the phase; a healthy trial that reports the same phase is not cut short.
TEST_F(ExecutorTest, PhaseTimeoutCatchesAStallAfterThatPhase) {
  Cell c = cell("pass", {"--ms=5000"}, /*timeout=*/30.0);
  c.phase_timeouts_s = {{"init_done", 0.5}};
  TrialResult r = run(c);
  // The workload would pass after 5 s, far inside its 30 s timeout: only the
  // phase deadline can make it a hang.
  EXPECT_EQ(r.outcome, Outcome::Hang);
  EXPECT_GE(r.wall_s, 0.5);
  EXPECT_EQ(r.hung_phase, "init_done");
  ASSERT_TRUE(r.harness.hang_deadline.has_value());
  EXPECT_EQ(r.harness.hang_deadline->phase, "init_done");
  EXPECT_DOUBLE_EQ(r.harness.hang_deadline->seconds, 0.5);
  EXPECT_EQ(r.harness.hang_deadline->learned, "");
}

TEST_F(ExecutorTest, PhaseTimeoutLeavesAHealthyTrialAlone) {
  Cell c = cell("pass", {"--ms=200"}, /*timeout=*/30.0);
  c.phase_timeouts_s = {{"teardown_begin", 0.5}, {"init_done", 5.0}};
  TrialResult r = run(c);
  EXPECT_EQ(r.outcome, Outcome::Passed);
  EXPECT_FALSE(r.harness.hang_deadline.has_value());
}

TEST_F(ExecutorTest, MalformedPhaseLineIsAWarningNotAFailure) {
  TrialResult r = run(cell("pass", {"--garbage-line"}));
  EXPECT_EQ(r.outcome, Outcome::Passed);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("phases.jsonl:4: malformed"), std::string::npos) << warnings_[0];
}

TEST_F(ExecutorTest, ExitThreeIsFailed) {
  TrialResult r = run(cell("exit3"));
  EXPECT_EQ(r.outcome, Outcome::Failed);
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(ExecutorTest, SegfaultIsCrashed) {
  TrialResult r = run(cell("segv"));
  EXPECT_EQ(r.outcome, Outcome::Crashed);
  EXPECT_EQ(r.signal, SIGSEGV);
}

TEST_F(ExecutorTest, HangIsDetectedWithPhaseAndEvidenceThenEndedByTerm) {
  Cell c = cell("hang", {}, 0.5);
  TrialResult r = run(c);
  EXPECT_EQ(r.outcome, Outcome::Hang);
  EXPECT_EQ(r.hung_phase, "teardown_begin");
  EXPECT_EQ(r.evidence_dir, "trials/norun/" + cell_folder_name("w=hang") + "/0/evidence");
  std::ifstream evidence(run_dir_ / r.evidence_dir / "evidence.json");
  ASSERT_TRUE(evidence) << "no evidence.json";
  // The run's provenance travels with each hung trial's evidence (issue 19).
  EXPECT_EQ(nlohmann::json::parse(evidence)["provenance"]["host"], "test-host");
  EXPECT_FALSE(r.evidence_summary.empty());
  EXPECT_EQ(r.harness.cleanup, CleanupStep::Term);
}

TEST_F(ExecutorTest, StoppedProcessIsAHangAndStillKilled) {
  TrialResult r = run(cell("sigstop", {}, 0.5));
  EXPECT_EQ(r.outcome, Outcome::Hang);
  EXPECT_EQ(r.hung_phase, "init_done");
}

TEST_F(ExecutorTest, TermIgnorerIsKilledAfterGrace) {
  TrialResult r = run(cell("ignore_term", {}, 0.5), 0.3);
  EXPECT_EQ(r.outcome, Outcome::Hang);
  EXPECT_EQ(r.harness.cleanup, CleanupStep::Kill);
}

TEST_F(ExecutorTest, DoubleForkedDaemonIsFoundAndKilled) {
  TrialResult r = run(cell("daemon"));
  EXPECT_EQ(r.outcome, Outcome::Passed);
  ASSERT_TRUE(r.metrics.contains("daemon_pid")) << r.metrics.dump();
  int daemon = static_cast<int>(r.metrics["daemon_pid"].get<double>());
  EXPECT_FALSE(process_alive(daemon));
  const std::vector<int>& leftovers = r.harness.leftover_pids;
  EXPECT_NE(std::find(leftovers.begin(), leftovers.end(), daemon), leftovers.end());
}

TEST_F(ExecutorTest, GrandchildHoldingTheConnectionIsNamedInTheEvidence) {
  for (const char* transport : {"--transport=unix", "--transport=tcp"}) {
    Cell c = cell("grandchild_holder", {transport}, 0.7);
    TrialResult r = run(c);
    ASSERT_EQ(r.outcome, Outcome::Hang) << transport;
    EXPECT_EQ(r.hung_phase, "teardown_begin");
    ASSERT_TRUE(r.metrics.contains("holder_pid"));
    int holder = static_cast<int>(r.metrics["holder_pid"].get<double>());
    EXPECT_FALSE(process_alive(holder));
    std::ifstream in(run_dir_ / r.evidence_dir / "evidence.json");
    ASSERT_TRUE(in) << "no evidence.json";
    auto evidence = nlohmann::json::parse(in);
    EXPECT_TRUE(names_holder(evidence, holder)) << transport << ": holder " << holder << " not named:\n"
                                                << evidence.dump(1).substr(0, 4000);
    EXPECT_NE(r.evidence_summary.find(std::to_string(holder)), std::string::npos) << r.evidence_summary;
  }
}

TEST_F(ExecutorTest, GrandchildThatLetsGoEndsTheWaitAndPasses) {
  TrialResult r = run(cell("grandchild_holder", {"--holder-ms=100"}, 10.0));
  EXPECT_EQ(r.outcome, Outcome::Passed);
  EXPECT_EQ(r.phases.back().name, "teardown_end");
}

TEST_F(ExecutorTest, MissingProgramIsInfraWithAClearMessage) {
  Cell c;
  c.id = "w=missing";
  c.argv = {"/nonexistent/hb_no_such_program"};
  TrialResult r = run(c);
  EXPECT_EQ(r.outcome, Outcome::Infra);
  EXPECT_NE(r.infra_error.find("No such file or directory"), std::string::npos) << r.infra_error;
  c.argv = {"hb-no-such-command-on-path"};
  r = run(c);
  EXPECT_EQ(r.outcome, Outcome::Infra);
  EXPECT_NE(r.infra_error.find("not found"), std::string::npos) << r.infra_error;
}

TEST_F(ExecutorTest, AWorkloadThatSaysItCannotRunHereIsInfraWithItsReason) {
  // Exit 3 with the infra_error metric (workloads/common/README.md): no evidence either way.
  Cell c;
  c.id = "w=no-gpu";
  c.argv = {"/bin/sh", "-c",
            "echo '{\"phase\":\"start\"}' >> \"$HANGBENCH_PHASE_FILE\"; "
            "echo '{\"metric\":\"infra_error\",\"value\":\"no CUDA device\"}' >> \"$HANGBENCH_PHASE_FILE\"; exit 3"};
  TrialResult r = run(c);
  EXPECT_EQ(r.outcome, Outcome::Infra);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.infra_error, "the workload could not run here (exit 3): no CUDA device");
  // Without the metric, exit 3 is a command's ordinary failure.
  r = run(cell("exit3"));
  EXPECT_EQ(r.outcome, Outcome::Failed);
  EXPECT_EQ(r.infra_error, "");
}

TEST_F(ExecutorTest, ConcurrentTrialsKeepTheirOwnChildren) {
  // Each trial waits only for its own processes: a daemon's or a hang's reaping
  // in one thread must not steal the exit status of another trial's root.
  std::vector<Cell> cells = {cell("exit3"), cell("daemon"), cell("hang", {}, 0.5), cell("segv"), cell("pass")};
  std::vector<std::future<TrialResult>> futures;
  for (size_t i = 0; i < cells.size(); ++i) {
    futures.push_back(std::async(std::launch::async, [&, i] {
      TrialContext ctx;
      ctx.run_dir = run_dir_.string();
      ctx.grace_s = 0.3;
      return executor_.run(cells[i], static_cast<int>(i), ctx);
    }));
  }
  std::vector<Outcome> got;
  for (auto& f : futures) got.push_back(f.get().outcome);
  EXPECT_EQ(got,
            (std::vector<Outcome>{Outcome::Failed, Outcome::Passed, Outcome::Hang, Outcome::Crashed, Outcome::Passed}));
}

}  // namespace
}  // namespace hangbench
