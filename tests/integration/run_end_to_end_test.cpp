// `hangbench run` end to end: the runner with a fake executor, the real CLI on a
// small matrix, configuration errors (exit 2, nothing written), and a SIGKILL of
// the harness mid-run followed by --resume with no duplicated rows.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "exec/proc_scan.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/store.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace hangbench {
namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kFixtures = std::string(HB_FIXTURES_DIR) + "/matrix/";

int start(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kHangbench.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, kHangbench.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int wait_exit_code(int pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int count_rows(const fs::path& db_path, const char* sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  sqlite3_busy_timeout(db, 2000);
  sqlite3_stmt* st = nullptr;
  int n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    n = sqlite3_column_int(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

// Trial processes orphaned by the SIGKILLed harness: found by their trial folder.
void kill_orphaned_trials(const fs::path& out) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid <= 0 || pid == ::getpid()) continue;
    std::ifstream env(e.path() / "environ");
    std::string text(std::istreambuf_iterator<char>(env), {});
    if (text.find("HANGBENCH_TRIAL_DIR=" + out.string()) != std::string::npos) ::kill(pid, SIGKILL);
  }
}

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hb_run_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(fs::exists(kHangbench)) << "build the hangbench target first";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RunTest, RunnerWithFakeExecutorStoresEveryTrialAndWritesReports) {
  Matrix m = load_matrix(kFixtures + "small.toml");
  FakeExecutor fake;
  for (int i = 0; i < 2; ++i) fake.set("behaviour=hang", i, Outcome::Hang);
  RunOptions opts;
  opts.out_dir = (dir_ / "out").string();
  opts.executor = &fake;
  opts.formats = {"md", "json", "csv", "junit", "html"};
  RunResult r = run_matrix(m, opts);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.written.size(), 5u);
  for (const auto& f : r.written) EXPECT_TRUE(fs::exists(f)) << f;
  Store store = Store::open(r.store_path);
  StoredRun run = store.load_run(r.run_id);
  EXPECT_EQ(run.info.status, "complete");
  ASSERT_EQ(run.trials.size(), 6u);
  EXPECT_EQ(run.trials[4].outcome, Outcome::Hang);
  EXPECT_EQ(run.provenance.matrix_sha256, m.sha256);
  EXPECT_FALSE(run.provenance.kernel.empty());
  EXPECT_EQ(r.summary.trials.size(), 6u);
  EXPECT_EQ(r.exit_code, exit_code_for(r.summary, false));
}

TEST_F(RunTest, OverridesAndFiltersApply) {
  Matrix m = load_matrix(kFixtures + "small.toml");
  FakeExecutor fake;
  RunOptions opts;
  opts.out_dir = (dir_ / "out").string();
  opts.executor = &fake;
  opts.trials = 3;
  opts.filters = {{"behaviour", "pass"}};
  opts.formats = {};
  RunResult r = run_matrix(m, opts);
  EXPECT_EQ(fake.calls().size(), 3u);
  for (const auto& call : fake.calls()) EXPECT_EQ(call.first, "behaviour=pass");
  opts.trials = 0;
  EXPECT_THROW(run_matrix(m, opts), UsageError);
  opts.trials.reset();
  opts.formats = {"pdf"};
  EXPECT_THROW(run_matrix(m, opts), UsageError);
}

TEST_F(RunTest, CliRunsTheSmallMatrixAndReportRendersAgain) {
  fs::path out = dir_ / "out";
  int pid = start({"run", "--matrix", kFixtures + "small.toml", "--out", out.string(), "--format", "md,json"},
                  dir_ / "run.log");
  int rc = wait_exit_code(pid);
  std::string log = slurp(dir_ / "run.log");
  EXPECT_TRUE(rc == 0 || rc == 1) << log;
  EXPECT_EQ(count_rows(out / "hangbench.sqlite", "SELECT COUNT(*) FROM trials"), 6) << log;
  EXPECT_EQ(count_rows(out / "hangbench.sqlite", "SELECT COUNT(*) FROM trials WHERE outcome = 'HANG'"), 2);
  EXPECT_EQ(count_rows(out / "hangbench.sqlite", "SELECT COUNT(*) FROM trials WHERE outcome = 'FAILED'"), 2);
  EXPECT_EQ(count_rows(out / "hangbench.sqlite", "SELECT COUNT(*) FROM runs WHERE status = 'complete'"), 1);
  EXPECT_TRUE(fs::exists(out / "report.md")) << log;
  EXPECT_TRUE(fs::exists(out / "report.json"));
  fs::remove(out / "report.md");
  pid = start({"report", "--out", out.string(), "--format", "md"}, dir_ / "report.log");
  int report_rc = wait_exit_code(pid);
  EXPECT_EQ(report_rc, rc) << slurp(dir_ / "report.log");
  EXPECT_TRUE(fs::exists(out / "report.md"));
  // The store's runs for scripts (ci/nightly.sh reads them so).
  EXPECT_EQ(wait_exit_code(start({"report", "--out", out.string(), "--list", "--json"}, dir_ / "list.json")), 0);
  auto runs = nlohmann::json::parse(slurp(dir_ / "list.json"), nullptr, false);
  ASSERT_FALSE(runs.is_discarded()) << slurp(dir_ / "list.json");
  EXPECT_EQ(runs["schema"], "hangbench.runs/1");
  ASSERT_EQ(runs["runs"].size(), 1u);
  EXPECT_EQ(runs["runs"][0]["status"], "complete");
  EXPECT_EQ(runs["runs"][0]["trials"], 6);
  EXPECT_EQ(runs["runs"][0]["matrix"], "small");  // which matrix each run ran
  EXPECT_EQ(wait_exit_code(start({"report", "--out", out.string(), "--json"}, dir_ / "json.log")), 2);
}

TEST_F(RunTest, ConfigurationErrorExitsTwoAndWritesNothing) {
  fs::path out = dir_ / "never";
  int rc =
      wait_exit_code(start({"run", "--matrix", kFixtures + "bad_trials.toml", "--out", out.string()}, dir_ / "log"));
  EXPECT_EQ(rc, 2);
  EXPECT_FALSE(fs::exists(out));
  std::string log = slurp(dir_ / "log");
  EXPECT_NE(log.find("bad_trials.toml:4:"), std::string::npos) << log;
  EXPECT_EQ(wait_exit_code(start({"run", "--resume", "--out", out.string()}, dir_ / "log2")), 2);
  EXPECT_EQ(
      wait_exit_code(start({"run", "--matrix", kFixtures + "small.toml", "--out", out.string(), "--filter", "nope=1"},
                           dir_ / "log3")),
      2);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RunTest, SigkillMidRunThenResumeCompletesWithoutDuplicates) {
  fs::path out = dir_ / "out";
  fs::path db = out / "hangbench.sqlite";
  int pid = start({"run", "--matrix", kFixtures + "resume.toml", "--out", out.string(), "--format", "json"},
                  dir_ / "first.log");
  ASSERT_GT(pid, 0);
  bool killed = false;
  for (int i = 0; i < 3000 && !killed; ++i) {  // up to a minute on a loaded machine
    if (count_rows(db, "SELECT COUNT(*) FROM trials") >= 3) {
      ::kill(pid, SIGKILL);
      killed = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  int first_rc = wait_exit_code(pid);
  kill_orphaned_trials(out);
  ASSERT_TRUE(killed) << slurp(dir_ / "first.log");
  EXPECT_EQ(first_rc, 128 + SIGKILL);
  int recorded = count_rows(db, "SELECT COUNT(*) FROM trials");
  EXPECT_GE(recorded, 3);
  EXPECT_LT(recorded, 12);  // killed mid-run: the matrix has 2 cells x 6 trials
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM runs WHERE status = 'running'"), 1);

  int rc = wait_exit_code(start({"run", "--resume", "--out", out.string(), "--format", "json"}, dir_ / "resume.log"));
  std::string log = slurp(dir_ / "resume.log");
  EXPECT_TRUE(rc == 0 || rc == 1) << log;
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM trials"), 12) << log;
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM (SELECT DISTINCT cell_id, idx FROM trials)"), 12);
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM runs WHERE status = 'complete'"), 1);
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM trials WHERE outcome = 'PASSED'"), 6);
  EXPECT_TRUE(fs::exists(out / "report.json"));
}

TEST_F(RunTest, SigtermStopsTheRunMarksItInterruptedAndExitsThree) {
  fs::path out = dir_ / "out";
  fs::path db = out / "hangbench.sqlite";
  int pid =
      start({"run", "--matrix", kFixtures + "resume.toml", "--out", out.string(), "--format", "json"}, dir_ / "log");
  for (int i = 0; i < 3000 && count_rows(db, "SELECT COUNT(*) FROM trials") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit_code(pid), 3) << slurp(dir_ / "log");
  EXPECT_EQ(count_rows(db, "SELECT COUNT(*) FROM runs WHERE status = 'interrupted'"), 1);
  // The run's trial processes were ended by the harness itself.
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream env(e.path() / "environ");
    std::string text(std::istreambuf_iterator<char>(env), {});
    EXPECT_EQ(text.find("HANGBENCH_TRIAL_DIR=" + out.string()), std::string::npos) << e.path();
  }
}

}  // namespace
}  // namespace hangbench
