// The SQLite store: round trips, WAL mode, resume bookkeeping, schema checks.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "hangbench/store.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hb_store_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "hangbench.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Matrix matrix() {
    Matrix m;
    m.path = "m.toml";
    m.name = "demo";
    m.sha256 = std::string(64, 'a');
    Cell a;
    a.id = "x=1";
    a.params = {{"x", "1"}};
    a.argv = {"prog", "--x=1"};
    a.trials = 3;
    a.expect = Expectation::Hang;
    a.launcher.kind = LauncherKind::Mpirun;
    a.launcher.ranks = 2;
    Cell b = a;
    b.id = "x=2";
    b.params = {{"x", "2"}};
    m.cells = {a, b};
    m.comparisons = {{"1 vs 2", {{"x", "1"}}, {{"x", "2"}}}};
    return m;
  }

  static TrialResult trial(const std::string& cell, int index, Outcome o) {
    TrialResult t;
    t.cell_id = cell;
    t.index = index;
    t.outcome = o;
    t.exit_code = o == Outcome::Failed ? 3 : 0;
    t.started_at = 1700000000.5 + index;
    t.wall_s = 0.25;
    t.phases = {{"init_done", 1700000000.6, 42, 0}, {"teardown_begin", 1700000000.7, 42, 0}};
    t.metrics = {{"steps", 3}};
    t.hung_phase = o == Outcome::Hang ? "teardown_begin" : "";
    t.evidence_dir = "trials/x=1/0/evidence";
    t.evidence_summary = "held open by pid 894";
    t.survivors = {77};
    return t;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(StoreTest, RunAndTrialsRoundTrip) {
  Provenance p;
  p.host = "h";
  p.started_at = "2026-12-02T10:00:00Z";
  p.environment = {{"NCCL_DEBUG", "INFO"}};
  {
    Store s = Store::open(path_);
    s.begin_run("r1", matrix(), p);
    s.record_trial("r1", trial("x=2", 0, Outcome::Passed));
    s.record_trial("r1", trial("x=1", 1, Outcome::Failed));
    s.record_trial("r1", trial("x=1", 0, Outcome::Hang));
    s.finish_run("r1", "complete");
  }
  Store s = Store::open(path_);
  StoredRun run = s.load_run("r1");
  EXPECT_EQ(run.info.status, "complete");
  EXPECT_FALSE(run.info.finished_at.empty());
  EXPECT_EQ(run.matrix.name, "demo");
  ASSERT_EQ(run.matrix.cells.size(), 2u);
  EXPECT_EQ(run.matrix.cells[0].launcher.kind, LauncherKind::Mpirun);
  EXPECT_EQ(run.matrix.cells[0].expect, Expectation::Hang);
  EXPECT_EQ(run.matrix.comparisons[0].a.at("x"), "1");
  EXPECT_EQ(run.provenance.environment.at("NCCL_DEBUG"), "INFO");
  ASSERT_EQ(run.trials.size(), 3u);
  // Ordered by the matrix's cell order, then index.
  EXPECT_EQ(run.trials[0].cell_id, "x=1");
  EXPECT_EQ(run.trials[0].index, 0);
  EXPECT_EQ(run.trials[2].cell_id, "x=2");
  const TrialResult& hang = run.trials[0];
  EXPECT_EQ(hang.outcome, Outcome::Hang);
  EXPECT_EQ(hang.hung_phase, "teardown_begin");
  ASSERT_EQ(hang.phases.size(), 2u);
  EXPECT_EQ(hang.phases[1].name, "teardown_begin");
  EXPECT_EQ(hang.phases[1].pid, 42);
  EXPECT_DOUBLE_EQ(hang.started_at, 1700000000.5);
  EXPECT_EQ(hang.metrics.at("steps"), 3);
  EXPECT_EQ(hang.survivors, std::vector<int>{77});
  EXPECT_EQ(hang.evidence_summary, "held open by pid 894");
  EXPECT_EQ(run.trials[1].exit_code, 3);
}

TEST_F(StoreTest, UsesWriteAheadLog) {
  Store s = Store::open(path_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT version FROM schema_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), kStoreSchemaVersion);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(StoreTest, CompletedKeysAndLatestUnfinishedRunDriveResume) {
  Store s = Store::open(path_);
  s.begin_run("old", matrix(), {});
  s.finish_run("old", "complete");
  s.begin_run("new", matrix(), {});
  s.record_trial("new", trial("x=1", 0, Outcome::Passed));
  s.record_trial("new", trial("x=2", 2, Outcome::Passed));
  EXPECT_EQ(s.latest_unfinished_run(), std::optional<std::string>("new"));
  EXPECT_EQ(s.latest_run(), std::optional<std::string>("new"));
  auto keys = s.completed_keys("new");
  EXPECT_EQ(keys, (std::set<std::pair<std::string, int>>{{"x=1", 0}, {"x=2", 2}}));
  EXPECT_TRUE(s.completed_keys("old").empty());
  s.finish_run("new", "complete");
  EXPECT_FALSE(s.latest_unfinished_run().has_value());
  auto runs = s.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, "old");
  EXPECT_EQ(runs[1].trials, 2);
}

TEST_F(StoreTest, RecordingTheSameTrialTwiceKeepsOneRow) {
  Store s = Store::open(path_);
  s.begin_run("r", matrix(), {});
  s.record_trial("r", trial("x=1", 0, Outcome::Hang));
  s.record_trial("r", trial("x=1", 0, Outcome::Passed));
  auto run = s.load_run("r");
  ASSERT_EQ(run.trials.size(), 1u);
  EXPECT_EQ(run.trials[0].outcome, Outcome::Passed);
}

TEST_F(StoreTest, UnknownRunAndUnopenablePathAreStoreErrors) {
  Store s = Store::open(path_);
  EXPECT_THROW(s.load_run("nope"), StoreError);
  EXPECT_THROW(Store::open("/proc/hangbench-cannot-write-here/x.sqlite"), StoreError);
}

// report, evidence and merge read a store without writing beside it.
TEST_F(StoreTest, ReadOnlyOpenReadsAndCreatesNothing) {
  {
    Store s = Store::open(path_);
    s.begin_run("r1", matrix(), Provenance{});
    s.record_trial("r1", trial("x=1", 0, Outcome::Hang));
  }  // closed: the WAL is checkpointed and removed
  ASSERT_FALSE(fs::exists(path_ + "-wal"));
  Store s = Store::open_read_only(path_);
  EXPECT_EQ(s.load_run("r1").trials.size(), 1u);
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
  EXPECT_FALSE(fs::exists(path_ + "-shm"));
  EXPECT_THROW(s.begin_run("r2", matrix(), Provenance{}), StoreError);
}

TEST_F(StoreTest, ReadOnlyOpenOfAFileThatIsNotAStoreIsBadInput) {
  fs::create_directories(dir_);
  std::ofstream(path_) << "hello, not SQLite\n";
  try {
    Store::open_read_only(path_);
    ADD_FAILURE() << "opened a text file as a store";
  } catch (const StoreInputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a hangbench store"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Store::open_read_only((dir_ / "missing.sqlite").string()), StoreInputError);
}

// Someone else's SQLite database is refused before anything is written into it
// (issue 41: history --store on one wrote hangbench's schema and WAL mode into it).
TEST_F(StoreTest, AForeignDatabaseIsRefusedAndLeftAsItWas) {
  fs::create_directories(dir_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE accounts(id INTEGER); INSERT INTO accounts VALUES (1);", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto bytes = [&] {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  try {
    Store::open(path_);
    ADD_FAILURE() << "opened a foreign database as a store";
  } catch (const StoreInputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a hangbench store"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Store::open_read_only(path_), StoreInputError);
  EXPECT_EQ(bytes(), before);
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
  // An empty database (a new file) is still made a store.
  fs::remove(path_);
  EXPECT_NO_THROW(Store::open(path_));
}

// A path read from a store never leaves its folder: absolute or ".." is refused on load.
TEST_F(StoreTest, AnEvidenceFolderOutsideTheStoreIsRefused) {
  for (const std::string bad : {"../../somewhere/evidence", "/etc/evidence", "trials/../../x"}) {
    fs::remove_all(dir_);
    Store s = Store::open(path_);
    s.begin_run("r1", matrix(), Provenance{});
    TrialResult t = trial("x=1", 0, Outcome::Hang);
    t.evidence_dir = bad;
    s.record_trial("r1", t);
    EXPECT_THROW(s.load_run("r1"), StoreInputError) << bad;
  }
}

// The harness's facts are the "harness.*" keys of the metrics column, as they were
// before they were typed: a row written then loads into the facts, and a trial
// written now holds the column's text of then.
TEST_F(StoreTest, HarnessFactsAreTheMetricsColumnOfEveryStore) {
  const std::string metrics_then =
      R"({"harness.cgroup":true,"harness.cleanup":"SIGTERM","harness.hang_deadline":"teardown_begin + 5 s",)"
      R"("harness.pid_namespace":true,"steps":3})";
  Store s = Store::open(path_);
  s.begin_run("r1", matrix(), Provenance{});
  s.record_trial("r1", trial("x=1", 0, Outcome::Hang));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const std::string rewrite = "UPDATE trials SET metrics_json = '" + metrics_then + "'";
  ASSERT_EQ(sqlite3_exec(db, rewrite.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);  // a row of then
  TrialResult t = s.load_run("r1").trials.at(0);
  EXPECT_EQ(t.metrics, (nlohmann::json{{"steps", 3}}));
  EXPECT_EQ(t.harness.cleanup, CleanupStep::Term);
  EXPECT_TRUE(t.harness.cgroup && t.harness.pid_namespace);
  ASSERT_TRUE(t.harness.hang_deadline.has_value());
  EXPECT_EQ(t.harness.hang_deadline->phase, "teardown_begin");
  t.index = 1;
  s.record_trial("r1", t);  // written now
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT metrics_json FROM trials WHERE idx = 1", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), metrics_then);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  { Store s = Store::open(path_); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THROW(Store::open(path_), StoreError);
}

}  // namespace
}  // namespace hangbench
