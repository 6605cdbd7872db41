// Nothing lost, round two (issue 29, docs/lifecycle.md): no workload output can
// crash the harness, a skewed clock is not a hang, runs and cells never share a
// trial folder, --resume names the run it continues and refuses what would change
// it, no path from a store leaves its folder, read-only stores read, and no trial
// process survives when the harness and its watcher are SIGKILLed together.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "exec/pid_namespace.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/store.hpp"
#include "lifecycle_support.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

using namespace hangbench::test;

// The pid of the harness's watcher (its child named hangbench-watch), or -1.
int watcher_of(int harness) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid <= 0) continue;
    auto st = exec_detail::read_proc_stat(pid);
    if (!st || st->ppid != harness) continue;
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "hangbench-watch") return pid;
  }
  return -1;
}

// Folders directly under `dir`.
std::set<std::string> folders(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) out.insert(e.path().filename().string());
  }
  return out;
}

class RoundTwoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hb_life2_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(fs::exists(kHangbench)) << "build the hangbench target first";
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  void TearDown() override {
    for (int pid : trial_processes(dir_)) ::kill(pid, SIGKILL);
    fs::remove_all(dir_);
  }

  // A matrix file in the test's folder.
  std::string matrix(const std::string& name, const std::string& text) {
    fs::path path = dir_ / (name + ".toml");
    std::ofstream(path) << text;
    return path.string();
  }

  // A shell script in the test's folder; its path.
  std::string script(const std::string& name, const std::string& text) {
    fs::path path = dir_ / (name + ".sh");
    std::ofstream(path) << text;
    return path.string();
  }

  // Runs hangbench to its end; the exit code, with its output in `log_`.
  int run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    fs::path log = dir_ / "log";
    fs::remove(log);
    int rc = wait_exit_code(hangbench(args, log, env));
    log_ = slurp(log);
    return rc;
  }

  fs::path dir_;
  std::string log_;
};

// The harness and its watcher SIGKILLed at once (an OOM killer, a node agent):
// every trial process dies by the kernel's hand and every cgroup is removed.
TEST_F(RoundTwoTest, HarnessAndWatcherKilledTogetherLeaveNoProcessAndNoCgroup) {
  ASSERT_TRUE(exec_detail::pid_namespaces_available()) << "this test needs PID namespaces (root, as CI has)";
  fs::path out = dir_ / "out";
  pid_t harness = hangbench({"run", "--matrix", kFixtures + "in_flight.toml", "--out", out.string()}, dir_ / "run.log");
  ASSERT_GT(harness, 0);
  ASSERT_TRUE(wait_for([&] { return trial_processes(out).size() >= 26; }, 120)) << slurp(dir_ / "run.log");
  int watcher = watcher_of(harness);
  ASSERT_GT(watcher, 0) << "no hangbench-watch child of " << harness;
  ::kill(harness, SIGKILL);
  ::kill(watcher, SIGKILL);
  EXPECT_EQ(wait_exit_code(harness), 128 + SIGKILL);
  EXPECT_TRUE(wait_for([&] { return trial_processes(out).empty(); }, 10))
      << trial_processes(out).size() << " processes of the trials outlived the harness and its watcher";
  EXPECT_TRUE(wait_for([&] { return cgroups_of(harness) == 0; }, 10)) << cgroups_of(harness) << " cgroups left";
  // The provenance says which mode ran.
  Store store = Store::open_read_only((out / "hangbench.sqlite").string());
  EXPECT_EQ(store.load_run(*store.latest_run()).provenance.trial_isolation, "pid-namespace");
}

// A trial's /proc is its namespace's: pid 1 is the trial's init and the workload
// finds itself by the pid it sees (CUDA's driver failed in the namespace with the
// machine's /proc: error 304 at cudaGetDeviceCount on the H200).
TEST_F(RoundTwoTest, ATrialSeesTheProcOfItsOwnPidNamespace) {
  ASSERT_TRUE(exec_detail::pid_namespaces_available()) << "this test needs PID namespaces (root, as CI has)";
  const fs::path seen = dir_ / "seen";
  std::string m = matrix("proc", "name = \"proc\"\ncommand = [\"sh\", \"" +
                                     script("proc", "cat /proc/1/comm /proc/$$/comm > '" + seen.string() + "'\n") +
                                     "\"]\ntrials = 1\ntimeout = 30.0\n");
  EXPECT_EQ(run({"run", "--matrix", m, "--out", (dir_ / "out").string()}), 0) << log_;
  EXPECT_EQ(slurp(seen), "hangbench-init\nsh\n");
}

// A valid line nested 100,000 deep once overflowed the serializer's stack.
TEST_F(RoundTwoTest, ADeepPhaseLineIsAWarningAndTheRunCompletes) {
  fs::path deep = dir_ / "deep.jsonl";
  std::ofstream(deep) << R"({"metric":"deep","value":)" << std::string(100000, '[') << std::string(100000, ']')
                      << "}\n";
  std::string m = matrix("deep", "name = \"deep\"\ncommand = [\"sh\", \"" +
                                     script("deep", "cat '" + deep.string() + "' >> \"$HANGBENCH_PHASE_FILE\"\n") +
                                     "\"]\ntrials = 2\ntimeout = 30.0\n");
  EXPECT_EQ(run({"run", "--matrix", m, "--out", (dir_ / "out").string()}), 0) << log_;
  EXPECT_NE(log_.find(":1: phase line ignored unparsed (longer than 64 KiB (200026 bytes))"), std::string::npos)
      << log_;
  EXPECT_NE(log_.find(" complete;"), std::string::npos) << log_;
}

// "t": 0 from a rank whose clock is skewed must not make a healthy trial a HANG.
TEST_F(RoundTwoTest, ASkewedPhaseClockIsAWarningNotAHang) {
  std::string m =
      matrix("skew", "name = \"skew\"\ncommand = [\"sh\", \"" +
                         script("skew", R"(echo '{"phase":"teardown_begin","t":0}' >> "$HANGBENCH_PHASE_FILE"
sleep 0.5
)") + "\"]\ntrials = 2\ntimeout = 30.0\nexpect = \"no-hang\"\n[phase_timeouts]\nteardown_begin = 5.0\n");
  EXPECT_EQ(run({"run", "--matrix", m, "--out", (dir_ / "out").string()}), 0) << log_;
  EXPECT_NE(log_.find("a skewed clock?"), std::string::npos) << log_;
  Store store = Store::open_read_only((dir_ / "out" / "hangbench.sqlite").string());
  for (const auto& t : store.load_run(*store.latest_run()).trials) EXPECT_EQ(t.outcome, Outcome::Passed);
}

// "a/b" and "a_b" sanitize to one name; each cell still has its own folders, and
// each trial's phases.jsonl holds only its own cell's lines.
TEST_F(RoundTwoTest, CellsWhoseNamesSanitizeAlikeNeverShareATrialFolder) {
  std::string m =
      matrix("alike", "name = \"alike\"\ncommand = [\"sh\", \"" +
                          script("who", R"(printf '{"metric":"who","value":"%s"}\n' "$WHO" >> "$HANGBENCH_PHASE_FILE"
)") +
                          "\"]\ntrials = 3\ntimeout = 30.0\n[env]\nWHO = \"{x}\"\n"
                          "[axes]\nx = [\"a/b\", \"a_b\", \"\\u00fc\", \"\\u00e9\"]\n");
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"run", "--matrix", m, "--out", out.string()}), 0) << log_;
  auto runs = folders(out / "trials");
  ASSERT_EQ(runs.size(), 1u);
  fs::path run_dir = out / "trials" / *runs.begin();
  auto cells = folders(run_dir);
  EXPECT_EQ(cells.size(), 4u);
  for (const auto& value : {"a/b", "a_b", "\u00fc", "\u00e9"}) {
    fs::path cell = run_dir / cell_folder_name(std::string("x=") + value);
    ASSERT_TRUE(cells.count(cell.filename().string())) << value;
    EXPECT_EQ(folders(cell).size(), 3u) << value;
    for (int i = 0; i < 3; ++i) {
      std::ifstream phases(cell / std::to_string(i) / "phases.jsonl");
      int lines = 0;
      for (std::string line; std::getline(phases, line); ++lines) {
        EXPECT_EQ(nlohmann::json::parse(line).at("value"), value) << cell;
      }
      EXPECT_EQ(lines, 1) << cell << " #" << i;
    }
  }
}

// Two runs on one --out: the second writes its own trial folders, not the first's.
TEST_F(RoundTwoTest, TwoRunsOnOneFolderKeepTheirOwnTrialFolders) {
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}), 0) << log_;
  auto first = folders(out / "trials");
  ASSERT_EQ(first.size(), 1u);
  fs::path first_log;
  for (const auto& e : fs::recursive_directory_iterator(out / "trials" / *first.begin())) {
    if (e.path().filename() == "stdout.log") first_log = e.path();
  }
  ASSERT_FALSE(first_log.empty());
  auto written = fs::last_write_time(first_log);
  ASSERT_EQ(run({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}), 0) << log_;
  EXPECT_EQ(folders(out / "trials").size(), 2u);
  EXPECT_EQ(fs::last_write_time(first_log), written) << "the second run rewrote the first run's trial folder";
}

// --resume names the run it continues; several unfinished runs need --run, a
// complete store or one with no run says so, and changed options are refused.
TEST_F(RoundTwoTest, ResumeNamesItsRunAndRefusesAmbiguityAndConflicts) {
  fs::path out = dir_ / "out";
  EXPECT_EQ(run({"run", "--resume", "--out", out.string()}), 2);  // no store yet
  fs::create_directories(out);
  { Store::open((out / "hangbench.sqlite").string()); }  // a store that holds no run (a disk filled at once)
  EXPECT_EQ(run({"run", "--resume", "--out", out.string()}), 2) << log_;
  EXPECT_NE(log_.find("holds no run"), std::string::npos) << log_;
  // Two runs killed while their trials hang: both unfinished.
  for (int i = 0; i < 2; ++i) {
    pid_t harness = hangbench({"run", "--matrix", kFixtures + "hang_long.toml", "--out", out.string()},
                              dir_ / ("killed" + std::to_string(i) + ".log"));
    ASSERT_TRUE(wait_for([&] { return !trial_processes(out).empty(); }, 60));
    ::kill(harness, SIGKILL);
    EXPECT_EQ(wait_exit_code(harness), 128 + SIGKILL);
    ASSERT_TRUE(wait_for([&] { return trial_processes(out).empty(); }, 10));
  }
  EXPECT_EQ(run({"run", "--resume", "--out", out.string()}), 2) << log_;
  EXPECT_NE(log_.find("2 runs"), std::string::npos) << log_;
  EXPECT_NE(log_.find("name the one to continue with --run ID"), std::string::npos) << log_;
  Store store = Store::open_read_only((out / "hangbench.sqlite").string());
  std::string first = store.list_runs().front().id;
  EXPECT_EQ(run({"run", "--resume", "--out", out.string(), "--run", first, "--trials", "3"}), 2) << log_;
  EXPECT_NE(log_.find("--trials would change them"), std::string::npos) << log_;
  EXPECT_EQ(run({"run", "--resume", "--out", out.string(), "--run", first, "--matrix", kFixtures + "pass_one.toml"}), 2)
      << log_;
  EXPECT_NE(log_.find("--matrix would change them"), std::string::npos) << log_;
  EXPECT_EQ(run({"run", "--resume", "--out", out.string(), "--run", "no-such-run"}), 2) << log_;
  EXPECT_NE(log_.find("no such run"), std::string::npos) << log_;
}

// A shard store whose evidence folder points outside it is refused before merge writes anything.
TEST_F(RoundTwoTest, MergeRefusesAPathThatLeavesItsStore) {
  fs::path shard = dir_ / "shard";
  fs::create_directories(shard);
  {
    Store store = Store::open((shard / "hangbench.sqlite").string());
    Matrix m;
    m.name = "escape";
    Cell c;
    c.id = "default";
    c.trials = 1;
    m.cells = {c};
    store.begin_run("r1", m, Provenance{}, Shard{0, 1});
    TrialResult t;
    t.cell_id = "default";
    t.outcome = Outcome::Hang;
    t.evidence_dir = "../../somewhere/evidence";
    store.record_trial("r1", t);
    store.finish_run("r1", "complete");
  }
  fs::path out = dir_ / "merged";
  EXPECT_EQ(run({"merge", (shard / "hangbench.sqlite").string(), "--out", out.string()}), 2) << log_;
  EXPECT_NE(log_.find("goes up with '..'"), std::string::npos) << log_;
  EXPECT_FALSE(fs::exists(out));
  // A file that is not SQLite is bad input too.
  std::ofstream(dir_ / "not.sqlite") << "hello\n";
  EXPECT_EQ(run({"merge", (dir_ / "not.sqlite").string(), "--out", out.string()}), 2) << log_;
  EXPECT_NE(log_.find("is not a hangbench store"), std::string::npos) << log_;
}

// report and evidence read a store on a read-only file system, and make no -wal or -shm beside it.
TEST_F(RoundTwoTest, ReadOnlyStoresAreReadWithoutWritingBesideThem) {
  fs::path out = dir_ / "out";
  ASSERT_EQ(run({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}), 0) << log_;
  ASSERT_FALSE(fs::exists(out / "hangbench.sqlite-wal"));
  fs::create_directories(dir_ / "reports");
  std::string command = "mount --bind '" + out.string() + "' '" + out.string() + "' && mount -o remount,ro,bind '" +
                        out.string() + "' && '" + kHangbench + "' report --out '" + out.string() + "' --dest '" +
                        (dir_ / "reports").string() + "' && '" + kHangbench + "' evidence '" +
                        (out / "hangbench.sqlite").string() + "'";
  int rc = wait_exit_code(spawn({"unshare", "-m", "sh", "-c", command}, dir_ / "ro.log"));
  EXPECT_EQ(rc, 0) << slurp(dir_ / "ro.log");
  EXPECT_FALSE(fs::exists(out / "hangbench.sqlite-wal"));
  EXPECT_FALSE(fs::exists(out / "hangbench.sqlite-shm"));
}

struct BadInput {
  std::string name;
  std::vector<std::string> args;  // {out}, {dir} are replaced
  std::string message;
};

// The same bounds on the command line as in a matrix file, and each smaller case of
// the issue refused with exit 2 and a message naming it, before anything is written.
TEST_F(RoundTwoTest, BoundsAndSmallerCasesExitTwoNamingTheProblem) {
  const std::string small = kFixtures + "small.toml";
  matrix("grace_inf", "name = \"g\"\ncommand = \"true\"\ngrace = inf\n");
  matrix("timeout_inf", "name = \"t\"\ncommand = \"true\"\ntimeout = inf\n");
  matrix("phase_inf", "name = \"p\"\ncommand = \"true\"\n[phase_timeouts]\nx = 1e300\n");
  matrix("long_value", "name = \"l\"\ncommand = \"true\"\n[axes]\nv = [\"" + std::string(10000, 'v') + "\"]\n");
  const std::vector<BadInput> cases = {
      {"timeout inf", {"run", "--matrix", small, "--out", "{out}", "--timeout", "inf"}, "--timeout must be at most"},
      {"phase-timeout inf",
       {"run", "--matrix", small, "--out", "{out}", "--phase-timeout", "x=inf"},
       "--phase-timeout x must be at most"},
      {"trials 2e9 dry run",
       {"run", "--matrix", small, "--dry-run", "--trials", "2000000000"},
       "--trials must be at most 100000000"},
      {"concurrency 1e5",
       {"run", "--matrix", small, "--out", "{out}", "--concurrency", "100000"},
       "--concurrency must be between 0 and 4096"},
      {"grace inf", {"run", "--matrix", "{dir}/grace_inf.toml", "--out", "{out}"}, "grace_inf.toml:3: grace must be"},
      {"timeout inf in matrix",
       {"run", "--matrix", "{dir}/timeout_inf.toml", "--out", "{out}"},
       "timeout_inf.toml:3: timeout must be at most"},
      {"phase timeout 1e300",
       {"run", "--matrix", "{dir}/phase_inf.toml", "--out", "{out}"},
       "phase_inf.toml:4: [phase_timeouts].x must be at most"},
      {"10,000-byte axis value",
       {"run", "--matrix", "{dir}/long_value.toml", "--out", "{out}"},
       "long_value.toml:4: axis 'v' has a value of 10000 bytes"},
      {"empty out", {"run", "--matrix", small, "--out", ""}, "--out is empty"},
      {"run without resume", {"run", "--matrix", small, "--out", "{out}", "--run", "x"}, "--run ID names the run"},
  };
  fs::path out = dir_ / "out";
  for (const auto& c : cases) {
    std::vector<std::string> args;
    for (std::string a : c.args) {
      if (auto at = a.find("{out}"); at != std::string::npos) a.replace(at, 5, out.string());
      if (auto at = a.find("{dir}"); at != std::string::npos) a.replace(at, 5, dir_.string());
      args.push_back(a);
    }
    EXPECT_EQ(run(args), 2) << c.name << ": " << log_;
    EXPECT_NE(log_.find(c.message), std::string::npos) << c.name << ": " << log_;
    EXPECT_FALSE(fs::exists(out)) << c.name << " wrote " << out;
  }
}

// A hash file that cannot be read is said, not only recorded.
TEST_F(RoundTwoTest, AnUnreadableHashFileIsAWarning) {
  std::string m = matrix(
      "hash", "name = \"h\"\ncommand = \"true\"\ntrials = 1\nhash = [\"" + (dir_ / "missing.so").string() + "\"]\n");
  EXPECT_EQ(run({"run", "--matrix", m, "--out", (dir_ / "out").string()}), 0) << log_;
  EXPECT_NE(log_.find("warning: " + m + ": hash file " + (dir_ / "missing.so").string() + " cannot be read"),
            std::string::npos)
      << log_;
}

}  // namespace
}  // namespace hangbench
