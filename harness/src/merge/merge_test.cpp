// hangbench merge: shards run with --shard K/N make one run whose statistics equal
// an unsharded run's; shards that do not make one run are refused, nothing written.
#include "hangbench/merge.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>

#include "hangbench/executor.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/store.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

Matrix demo_matrix() {
  Matrix m;
  m.path = "demo.toml";
  m.name = "demo";
  m.sha256 = std::string(64, 'b');
  m.concurrency = 2;
  for (const char* gate : {"after", "none", "before"}) {
    Cell c;
    c.id = std::string("gate=") + gate;
    c.params = {{"gate", gate}};
    c.trials = 13;  // not a multiple of the shard count
    c.expect = std::string(gate) == "after" ? Expectation::Hang : Expectation::NoHang;
    m.cells.push_back(c);
  }
  m.comparisons = {{"after vs none", {{"gate", "after"}}, {{"gate", "none"}}},
                   {"after vs before", {{"gate", "after"}}, {{"gate", "before"}}}};
  return m;
}

// Outcomes that depend on (cell, index) only, so that any split gives the same trials.
TrialResult scripted(const Cell& cell, int index) {
  TrialResult r;
  bool hangs = cell.id == "gate=after" ? index % 5 != 0 : cell.id == "gate=before" && index == 4;
  r.outcome = hangs ? Outcome::Hang : (cell.id == "gate=none" && index == 7 ? Outcome::Crashed : Outcome::Passed);
  r.started_at = 1700000000.0 + index;
  r.wall_s = hangs ? 3.0 : 0.5 + 0.01 * index;
  r.phases = {{"teardown_begin", r.started_at + 0.1, 100, 0},
              {"teardown_end", r.started_at + 0.2 + 0.01 * index, 100, 0}};
  return r;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hb_merge_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(const std::string& name, std::optional<Shard> shard, Matrix m = demo_matrix()) {
    FakeExecutor executor(scripted);
    RunOptions o;
    o.out_dir = (dir_ / name).string();
    o.executor = &executor;
    o.formats = {"json"};
    o.shard = shard;
    return run_matrix(std::move(m), o);
  }
  std::vector<std::string> run_shards(int n) {
    std::vector<std::string> stores;
    for (int k = 0; k < n; ++k) stores.push_back(run("shard" + std::to_string(k), Shard{k, n}).store_path);
    return stores;
  }
  MergeOptions merge_into(const std::string& name, std::vector<std::string> stores) {
    MergeOptions o;
    o.stores = std::move(stores);
    o.out_dir = (dir_ / name).string();
    return o;
  }
  // The merge fails with exit-2 kind of error whose message has `needle`, and writes nothing.
  void expect_refused(const MergeOptions& o, const std::string& needle) {
    try {
      merge_shards(o);
      ADD_FAILURE() << "merge accepted shards that should be refused (" << needle << ")";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(o.out_dir)) << "a refused merge wrote " << o.out_dir;
  }

  fs::path dir_;
};

TEST_F(MergeTest, ShardRunsOnlyItsShareAndIsStampedInTheStore) {
  auto result = run("s1", Shard{1, 4});
  StoredRun stored = Store::open(result.store_path).load_run(result.run_id);
  ASSERT_TRUE(stored.info.shard.has_value());
  EXPECT_EQ(*stored.info.shard, (Shard{1, 4}));
  auto share = trials_of_shard(stored.matrix, {1, 4});
  ASSERT_EQ(stored.trials.size(), share.size());
  for (const auto& t : stored.trials) {
    EXPECT_TRUE(share.count({t.cell_id, t.index})) << t.cell_id << " #" << t.index;
    EXPECT_FALSE(t.host.empty()) << "each trial keeps the host it ran on";
  }
}

TEST_F(MergeTest, AnInterruptedShardResumesItsOwnShareOnly) {
  std::atomic<bool> stop{false};
  std::atomic<int> ran{0};
  FakeExecutor stopping([&](const Cell& cell, int index) {
    if (++ran == 3) stop = true;  // as if SIGTERM came after the third trial
    return scripted(cell, index);
  });
  RunOptions o;
  o.out_dir = (dir_ / "s2").string();
  o.executor = &stopping;
  o.formats = {"json"};
  o.shard = Shard{2, 4};
  o.cancel = &stop;
  o.concurrency = 1;
  auto first = run_matrix(demo_matrix(), o);
  ASSERT_TRUE(first.interrupted);

  RunOptions other = o;
  other.cancel = nullptr;
  other.shard = Shard{1, 4};
  EXPECT_THROW(resume_run(other), UsageError) << "a resume must not change the shard";

  FakeExecutor executor(scripted);
  RunOptions again = o;
  again.cancel = nullptr;
  again.executor = &executor;
  again.shard.reset();  // the store knows the shard
  auto resumed = resume_run(again);
  EXPECT_FALSE(resumed.interrupted);
  StoredRun stored = Store::open(resumed.store_path).load_run(resumed.run_id);
  std::set<TrialKey> recorded;
  for (const auto& t : stored.trials) recorded.emplace(t.cell_id, t.index);
  EXPECT_EQ(recorded, trials_of_shard(stored.matrix, {2, 4}));
  for (const auto& call : executor.calls()) EXPECT_TRUE(recorded.count(call)) << call.first << " #" << call.second;
}

TEST_F(MergeTest, MergedStatisticsEqualAnUnshardedRunCellByCell) {
  auto whole = run("whole", std::nullopt);
  auto merged = merge_shards(merge_into("merged", run_shards(4)));
  const auto& a = whole.summary;
  const auto& b = merged.summary;
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (size_t i = 0; i < a.cells.size(); ++i) {
    SCOPED_TRACE(a.cells[i].cell->id);
    EXPECT_EQ(a.cells[i].cell->id, b.cells[i].cell->id);
    EXPECT_EQ(a.cells[i].n, b.cells[i].n);
    EXPECT_EQ(a.cells[i].hangs, b.cells[i].hangs);
    EXPECT_EQ(a.cells[i].passed, b.cells[i].passed);
    EXPECT_EQ(a.cells[i].crashed, b.cells[i].crashed);
    EXPECT_EQ(a.cells[i].hang_ci95.lo, b.cells[i].hang_ci95.lo);
    EXPECT_EQ(a.cells[i].hang_ci95.hi, b.cells[i].hang_ci95.hi);
    EXPECT_EQ(a.cells[i].wall_s.p50, b.cells[i].wall_s.p50);
    EXPECT_EQ(a.cells[i].teardown_s.p90, b.cells[i].teardown_s.p90);
    EXPECT_EQ(a.cells[i].verdict, b.cells[i].verdict);
  }
  ASSERT_EQ(a.comparisons.size(), b.comparisons.size());
  for (size_t i = 0; i < a.comparisons.size(); ++i) {
    EXPECT_EQ(a.comparisons[i].p_two_sided, b.comparisons[i].p_two_sided);
    EXPECT_EQ(a.comparisons[i].log10_p_two_sided, b.comparisons[i].log10_p_two_sided);
    EXPECT_EQ(a.comparisons[i].p_holm, b.comparisons[i].p_holm);
  }
  EXPECT_EQ(whole.exit_code, merged.exit_code);
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "report.json"));
  // The merged store is an ordinary run: `report` reads it; it is not a shard.
  StoredRun stored = Store::open(merged.store_path).load_run(merged.run_id);
  EXPECT_FALSE(stored.info.shard.has_value());
  EXPECT_EQ(stored.trials.size(), 39u);
  EXPECT_EQ(stored.info.status, "complete");
}

TEST_F(MergeTest, RefusesAShardGivenTwice) {
  auto stores = run_shards(2);
  stores.push_back(stores[1]);
  expect_refused(merge_into("out", stores), "shard 1/2 given twice");
}

TEST_F(MergeTest, RefusesAMissingShardNamingItsTrials) {
  auto stores = run_shards(3);
  stores.pop_back();
  expect_refused(merge_into("out", stores), "shard(s) 2/3 missing (13 trials: gate=after #2, gate=after #5");
}

TEST_F(MergeTest, RefusesAMissingTrialNamingIt) {
  auto stores = run_shards(2);
  // Shard 0 lost a trial (a killed job): delete its row.
  {
    Store s = Store::open(stores[0]);
    StoredRun r = s.load_run(*s.latest_run());
    ASSERT_EQ(r.trials[0].cell_id, "gate=after");
  }
  std::string sql = "sqlite3 '" + stores[0] + "' \"DELETE FROM trials WHERE cell_id='gate=after' AND idx=2\"";
  ASSERT_EQ(std::system(sql.c_str()), 0);
  expect_refused(merge_into("out", stores),
                 "1 trial(s) missing (an interrupted shard? `run --resume` it): gate=after #2");
}

TEST_F(MergeTest, RefusesShardsOfDifferentMatrices) {
  Matrix other = demo_matrix();
  other.cells[0].timeout_s = 99;
  std::vector<std::string> stores = {run("a", Shard{0, 2}).store_path, run("b", Shard{1, 2}, other).store_path};
  expect_refused(merge_into("out", stores), "differ in matrix");
}

TEST_F(MergeTest, RefusesARunThatIsNotAShardAndAStoreThatIsNotThere) {
  expect_refused(merge_into("out", {run("whole", std::nullopt).store_path}), "is not a shard");
  expect_refused(merge_into("out", {(dir_ / "nowhere" / "hangbench.sqlite").string()}), "no store at");
}

TEST_F(MergeTest, RefusesAnOutputFolderThatHoldsAStore) {
  auto stores = run_shards(2);
  merge_shards(merge_into("merged", stores));
  try {
    merge_shards(merge_into("merged", stores));
    ADD_FAILURE() << "a second merge into the same folder was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("exists already"), std::string::npos) << e.what();
  }
}

TEST_F(MergeTest, ProvenanceListsHostsAndJoinsEnvironmentValuesThatDiffer) {
  ShardRun a, b;
  a.provenance.host = "node-b";
  b.provenance.host = "node-a";
  a.provenance.environment = {{"CUDA_VISIBLE_DEVICES", "0"}, {"NCCL_DEBUG", "INFO"}};
  b.provenance.environment = {{"CUDA_VISIBLE_DEVICES", "1"}, {"NCCL_DEBUG", "INFO"}};
  a.provenance.started_at = "2026-12-03T01:00:05Z";
  b.provenance.started_at = "2026-12-03T01:00:01Z";
  auto p = merge_provenance({a, b});
  EXPECT_EQ(p.host, "node-a, node-b");
  EXPECT_EQ(p.environment.at("CUDA_VISIBLE_DEVICES"), "0 | 1");
  EXPECT_EQ(p.environment.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(p.started_at, "2026-12-03T01:00:01Z");
}

TEST_F(MergeTest, TheMergedReportsSayTheyMergeNShardsAndListEachShardsCommand) {
  ShardRun a, b;
  a.shard = {1, 2};
  a.provenance.argv = {"hangbench", "run", "--shard", "1/2", "--out", "s1"};
  b.shard = {0, 2};
  b.provenance.argv = {"hangbench", "run", "--shard", "0/2", "--out", "s0"};
  auto p = merge_provenance({a, b});
  EXPECT_EQ(p.shard_commands,
            (std::vector<std::string>{"hangbench run --shard 0/2 --out s0", "hangbench run --shard 1/2 --out s1"}));
  EXPECT_NE(p.argv, a.provenance.argv);  // the merge's own command, not a shard's

  MergeOptions o = merge_into("merged", run_shards(2));
  o.formats = {"markdown", "html", "json"};
  merge_shards(o);
  const std::string md = read_text(dir_ / "merged" / "report.md");
  EXPECT_NE(md.find(", merging 2 shards: 0. `"), std::string::npos) << md;
  EXPECT_NE(md.find("; 1. `"), std::string::npos) << md;
  EXPECT_NE(read_text(dir_ / "merged" / "report.html").find("<br>merges 2 shards:<ol start=\"0\"><li><code>"),
            std::string::npos);
  EXPECT_NE(read_text(dir_ / "merged" / "report.json").find("\"shard_commands\""), std::string::npos);
}

}  // namespace
}  // namespace hangbench

namespace hangbench {
namespace {

// A workload may plant links in its trial folder: merge copies its folders and
// regular files only, so no link (to a folder elsewhere, a loop) is followed or
// copied and the store is complete with its reports (issue 41, item 3).
TEST_F(MergeTest, LinksAndFifosInATrialFolderAreNeitherFollowedNorCopied) {
  Matrix m = demo_matrix();
  FakeExecutor executor([](const Cell& cell, int index) {
    TrialResult r = scripted(cell, index);
    if (r.outcome == Outcome::Hang) r.evidence_dir = "trials/t/" + std::to_string(index) + "/evidence";
    return r;
  });
  RunOptions o;
  o.out_dir = (dir_ / "shard").string();
  o.executor = &executor;
  o.formats = {"json"};
  o.shard = Shard{0, 1};
  const std::string store = run_matrix(std::move(m), o).store_path;
  const fs::path trial = dir_ / "shard" / "trials" / "t" / "1";  // gate=after #1 hangs
  fs::create_directories(trial / "evidence");
  std::ofstream(trial / "evidence" / "evidence.txt") << "ours\n";
  fs::create_directories(dir_ / "outside");
  std::ofstream(dir_ / "outside" / "secret.txt") << "not the run's\n";
  fs::create_directory_symlink(dir_ / "outside", trial / "planted");
  fs::create_symlink(dir_ / "outside" / "secret.txt", trial / "planted.txt");
  fs::create_directory_symlink("..", trial / "loop");
  ASSERT_EQ(::mkfifo((trial / "pipe").c_str(), 0644), 0);

  auto merged = merge_shards(merge_into("merged", {store}));
  const fs::path copy = dir_ / "merged" / "trials" / "t" / "1";
  EXPECT_EQ(read_text(copy / "evidence" / "evidence.txt"), "ours\n");
  for (const char* name : {"planted", "planted.txt", "loop", "pipe"}) {
    EXPECT_FALSE(fs::exists(fs::symlink_status(copy / name))) << name;
  }
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "merged")) {
    EXPECT_NE(e.path().filename(), "secret.txt") << e.path();
    EXPECT_FALSE(e.is_symlink()) << e.path();
  }
  EXPECT_EQ(Store::open_read_only(merged.store_path).load_run(merged.run_id).info.status, "complete");
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "report.json"));
}

}  // namespace
}  // namespace hangbench
