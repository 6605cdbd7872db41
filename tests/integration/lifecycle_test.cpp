// Nothing left behind (issue 18, docs/lifecycle.md): a SIGKILLed harness leaves no
// process and no cgroup of its trials, with cgroups and without; stale groups and
// survivors of a dead run are ended at the next start; one run per output folder;
// every bad input is refused with exit 2, a message that names it and nothing written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "exec/cgroup.hpp"
#include "exec/proc_scan.hpp"
#include "lifecycle_support.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace hangbench {
namespace {

using namespace hangbench::test;  // spawn, hangbench, wait_exit_code, slurp, trial_processes, cgroups_of, wait_for

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hb_life_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(fs::exists(kHangbench)) << "build the hangbench target first";
    // Orphans of a killed harness reparent to us, so that we see and reap them.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  void TearDown() override {
    for (int pid : trial_processes(dir_)) ::kill(pid, SIGKILL);
    fs::remove_all(dir_);
  }

  // Kills the harness with SIGKILL while five trials (a daemon, 20 children, a
  // stopped process, one ignoring SIGTERM) run, then waits for all of them to go.
  // With `cgroups`, the trials must really be in cgroups of their own before the
  // kill: "no cgroup left" proves nothing where none was ever made.
  void sigkill_leaves_nothing(const std::vector<std::string>& env, bool cgroups = false) {
    if (cgroups) {
      ASSERT_FALSE(exec_detail::find_writable_cgroup_root().empty())
          << "no writable cgroup v2 here: the cgroup half of this test cannot be checked (CI has one; "
             "HANGBENCH_NO_CGROUPS=1 runs the half without them)";
    }
    fs::path out = dir_ / "out";
    pid_t pid = hangbench({"run", "--matrix", kFixtures + "in_flight.toml", "--out", out.string()}, dir_ / "log", env);
    ASSERT_GT(pid, 0);
    // 1 hang + 1 ignore_term + 1 sigstop + 2 daemon + 21 children.
    ASSERT_TRUE(wait_for([&] { return trial_processes(out).size() >= 26; }, 120)) << slurp(dir_ / "log");
    if (cgroups) {
      // Five trials, each in its own group.
      EXPECT_TRUE(wait_for([&] { return cgroups_of(pid) >= 5; }, 10))
          << cgroups_of(pid) << " cgroups of the harness's trials while five run";
    }
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_exit_code(pid), 128 + SIGKILL);
    EXPECT_TRUE(wait_for([&] { return trial_processes(out).empty(); }, 10))
        << trial_processes(out).size() << " processes of the trials outlived the harness";
    EXPECT_TRUE(wait_for([&] { return cgroups_of(pid) == 0; }, 10)) << cgroups_of(pid) << " cgroups left";
    // The watcher says what it ended once it is done (it may finish after its victims).
    EXPECT_TRUE(wait_for(
        [&] { return slurp(dir_ / "log").find("watcher: the harness is gone; ended") != std::string::npos; }, 10))
        << slurp(dir_ / "log");
  }

  fs::path dir_;
};

TEST_F(LifecycleTest, SigkillOfTheHarnessLeavesNoProcessAndNoCgroup) { sigkill_leaves_nothing({}, true); }

TEST_F(LifecycleTest, SigkillOfTheHarnessLeavesNoProcessWithoutCgroups) {
  sigkill_leaves_nothing({"HANGBENCH_NO_CGROUPS=1"});
}

// Where PID namespaces are not allowed, the watcher alone ends the trials of a dead harness.
TEST_F(LifecycleTest, SigkillOfTheHarnessLeavesNoProcessWithoutPidNamespaces) {
  sigkill_leaves_nothing({"HANGBENCH_NO_PIDNS=1"});
}

// The trial folders of the runs recorded in `out` (trials/<run id>/<cell>/<index>).
std::vector<fs::path> recorded_trial_folders(const fs::path& out) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(out / "trials", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it.depth() == 2 && it->is_directory()) found.push_back(it->path());
  }
  return found;
}

TEST_F(LifecycleTest, StartEndsSurvivorsOfAnEarlierRunInTheFolder) {
  fs::path out = dir_ / "out";
  // An earlier run of the folder, recorded in its store.
  ASSERT_EQ(wait_exit_code(
                hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}, dir_ / "first.log")),
            0)
      << slurp(dir_ / "first.log");
  auto folders = recorded_trial_folders(out);
  ASSERT_EQ(folders.size(), 1u);
  // A trial process of that run whose harness and watcher are both gone.
  pid_t orphan = spawn({"sleep", "1000"}, dir_ / "sleep.log", {"HANGBENCH_TRIAL_DIR=" + folders[0].string()});
  ASSERT_GT(orphan, 0);
  ASSERT_TRUE(wait_for([&] { return trial_processes(out).count(orphan) == 1; }, 10));
  int rc =
      wait_exit_code(hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("cleanup: ended 1 process(es) of an earlier run's trials"), std::string::npos) << log;
  EXPECT_EQ(wait_exit_code(orphan), 128 + SIGKILL);
}

// Issue 41, item 4: a live run whose --out lies inside another folder's trials/
// (X/trials/inner) is no leftover of X. Starting a run on X must leave its trials
// alone; so must a process that names a trial folder of a run X never recorded.
TEST_F(LifecycleTest, StartLeavesALiveRunNestedInItsFolderAlone) {
  fs::path out = dir_ / "out";
  fs::path inner = out / "trials" / "inner";
  fs::create_directories(inner);
  pid_t inner_harness =
      hangbench({"run", "--matrix", kFixtures + "hang_long.toml", "--out", inner.string()}, dir_ / "inner.log");
  ASSERT_GT(inner_harness, 0);
  ASSERT_TRUE(wait_for([&] { return !trial_processes(inner).empty(); }, 60)) << slurp(dir_ / "inner.log");
  const std::set<int> inner_trials = trial_processes(inner);
  // Not a run of this folder's store either: a trial folder of an unknown run id.
  pid_t stranger = spawn({"sleep", "1000"}, dir_ / "sleep.log",
                         {"HANGBENCH_TRIAL_DIR=" + (out / "trials/20990101T000000Z-abcdef/x/0").string()});
  ASSERT_GT(stranger, 0);

  int rc =
      wait_exit_code(hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 0) << log;
  EXPECT_EQ(log.find("cleanup: ended"), std::string::npos) << log;
  const std::set<int> inner_after = trial_processes(inner);
  for (int pid : inner_trials)
    EXPECT_EQ(inner_after.count(pid), 1u) << "the nested run's trial " << pid << " was ended";
  int status = 0;
  EXPECT_EQ(::waitpid(stranger, &status, WNOHANG), 0) << "a process of no recorded run was ended";
  EXPECT_EQ(::waitpid(inner_harness, &status, WNOHANG), 0) << "the nested run ended: " << slurp(dir_ / "inner.log");

  ::kill(inner_harness, SIGTERM);
  wait_exit_code(inner_harness);
  ::kill(stranger, SIGKILL);
  wait_exit_code(stranger);
}

TEST_F(LifecycleTest, StartRemovesStaleCgroupsOfDeadHarnessesOnly) {
  std::string root = exec_detail::find_writable_cgroup_root();
  ASSERT_FALSE(root.empty()) << "this test needs a writable cgroup v2 (as CI has)";
  pid_t gone = spawn({"true"}, dir_ / "true.log");
  ASSERT_EQ(wait_exit_code(gone), 0);
  std::string stale = root + "/hangbench-" + std::to_string(gone) + ".1-hbtest-stale";
  std::string live = root + "/hangbench-" + exec_detail::cgroup_owner_tag() + "-hbtest-live";  // ours: alive
  // The sleeper first: under ctest -j another test's harness removes an empty stale
  // group at its start, and one removed before the sleeper moved in left the sleeper
  // in no group and this test waiting for it (a 300 s timeout seen once).
  pid_t inside = spawn({"sleep", "1000"}, dir_ / "sleep.log");
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0);
  { std::ofstream(stale + "/cgroup.procs") << inside; }
  ASSERT_EQ(::mkdir(live.c_str(), 0755), 0);
  int rc = wait_exit_code(
      hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", (dir_ / "out").string()}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 0) << log;
  // Under ctest -j, a harness that another test starts at the same moment may
  // clean the stale group first: then that start, not ours, says so. Either way
  // the group is gone, its process was killed, and our live group was left alone.
  const bool ours =
      log.find("removed stale cgroup hangbench-" + std::to_string(gone) + ".1-hbtest-stale") != std::string::npos;
  if (ours) EXPECT_NE(log.find("ended its processes " + std::to_string(inside)), std::string::npos) << log;
  EXPECT_EQ(wait_exit_code(inside), 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  ::rmdir(live.c_str());
}

TEST_F(LifecycleTest, OneRunPerFolder) {
  fs::path out = dir_ / "out";
  pid_t first = hangbench({"run", "--matrix", kFixtures + "hang_long.toml", "--out", out.string()}, dir_ / "first.log");
  ASSERT_TRUE(wait_for([&] { return !trial_processes(out).empty(); }, 60)) << slurp(dir_ / "first.log");
  std::string pid_text = "pid " + std::to_string(first);
  EXPECT_EQ(wait_exit_code(hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()},
                                     dir_ / "second.log")),
            2);
  EXPECT_NE(slurp(dir_ / "second.log").find(pid_text), std::string::npos) << slurp(dir_ / "second.log");
  EXPECT_EQ(wait_exit_code(hangbench({"run", "--resume", "--out", out.string()}, dir_ / "resume.log")), 2);
  EXPECT_NE(slurp(dir_ / "resume.log").find(pid_text), std::string::npos) << slurp(dir_ / "resume.log");
  auto entries = [](const fs::path& p) { return std::distance(fs::directory_iterator(p), fs::directory_iterator{}); };
  EXPECT_EQ(entries(out / "trials"), 1) << "a refused run wrote a trial folder";

  // A lock left by a dead harness is taken over, with a warning naming it.
  ::kill(first, SIGKILL);
  EXPECT_EQ(wait_exit_code(first), 128 + SIGKILL);
  int rc = wait_exit_code(
      hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}, dir_ / "takeover.log"));
  std::string log = slurp(dir_ / "takeover.log");
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("warning: the lock of " + out.string() + " was left by " + pid_text), std::string::npos) << log;
}

struct BadInput {
  std::string name;
  std::vector<std::string> args;  // {out} and {file} are replaced
  std::string message;            // must appear in the output
  int code = 2;                   // 2 for what the user typed; 3 where the machine refused (cannot create)
};

TEST_F(LifecycleTest, EveryBadInputExitsWithItsCodeNamingItAndWritesNothing) {
  fs::path out = dir_ / "out", file = dir_ / "a_file";
  std::ofstream(file) << "not a folder\n";
  const std::string small = kFixtures + "small.toml";
  const std::vector<BadInput> cases = {
      {"trials 0", {"run", "--matrix", small, "--out", "{out}", "--trials", "0"}, "--trials must be > 0"},
      {"trials -3", {"run", "--matrix", small, "--out", "{out}", "--trials", "-3"}, "--trials must be > 0"},
      {"timeout 0", {"run", "--matrix", small, "--out", "{out}", "--timeout", "0"}, "--timeout must be > 0"},
      {"timeout -1", {"run", "--matrix", small, "--out", "{out}", "--timeout=-1"}, "--timeout must be > 0"},
      {"concurrency -1",
       {"run", "--matrix", small, "--out", "{out}", "--concurrency=-1"},
       "--concurrency must be between 0 and"},
      {"phase-timeout 0", {"run", "--matrix", small, "--out", "{out}", "--phase-timeout", "X=0"}, "--phase-timeout"},
      {"phase-timeout no =", {"run", "--matrix", small, "--out", "{out}", "--phase-timeout", "X"}, "--phase-timeout"},
      {"resume trials 0", {"run", "--resume", "--out", "{out}", "--trials", "0"}, "--trials must be > 0"},
      {"out is a file", {"run", "--matrix", small, "--out", "{file}"}, "is a file, not a folder"},
      {"out under a file", {"run", "--matrix", small, "--out", "{file}/sub"}, "Not a directory", 3},
      {"matrix is a folder",
       {"run", "--matrix", kFixtures, "--out", "{out}"},
       "is a folder; --matrix wants a matrix TOML"},
      {"matrix missing", {"run", "--matrix", kFixtures + "nope.toml", "--out", "{out}"}, "nope.toml: cannot read"},
      {"unknown format",
       {"run", "--matrix", small, "--out", "{out}", "--format", "pdf"},
       "unknown report format 'pdf'"},
      {"resume without store", {"run", "--resume", "--out", "{out}"}, "--resume: no store"},
      {"report without store", {"report", "--out", "{out}"}, "no store at"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args;
    for (std::string a : c.args) {
      if (auto at = a.find("{out}"); at != std::string::npos) a.replace(at, 5, out.string());
      if (auto at = a.find("{file}"); at != std::string::npos) a.replace(at, 6, file.string());
      args.push_back(a);
    }
    fs::path log = dir_ / "log";
    fs::remove(log);
    EXPECT_EQ(wait_exit_code(hangbench(args, log)), c.code) << c.name << ": " << slurp(log);
    std::string text = slurp(log);
    EXPECT_NE(text.find(c.message), std::string::npos) << c.name << ": " << text;
    EXPECT_EQ(text.find("matrix: "), std::string::npos) << c.name << ": a flag's error says 'matrix:': " << text;
    EXPECT_FALSE(fs::exists(out)) << c.name << " wrote " << out;
    EXPECT_EQ(slurp(file), "not a folder\n") << c.name;
  }
}

TEST_F(LifecycleTest, OutOnAReadOnlyFileSystemIsAnInfrastructureError) {
  // A private mount namespace: the read-only tmpfs vanishes with the command.
  fs::path ro = dir_ / "ro";
  fs::create_directories(ro);
  std::string command = "mount -t tmpfs -o ro,size=64k none '" + ro.string() + "' && exec '" + kHangbench +
                        "' run --matrix '" + kFixtures + "small.toml' --out '" + (ro / "out").string() + "'";
  int rc = wait_exit_code(spawn({"unshare", "-m", "sh", "-c", command}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 3) << log;  // cannot write: 3 in every command (base/errors.hpp)
  EXPECT_NE(log.find("Read-only file system"), std::string::npos) << log;
  EXPECT_NE(log.find((ro / "out").string()), std::string::npos) << log;
}

TEST_F(LifecycleTest, DiskFullNamesTheFileItCouldNotWrite) {
  fs::path small_fs = dir_ / "full";
  fs::create_directories(small_fs);
  // 16 KiB hold the folder and the lock, not the store's first pages.
  std::string command = "mount -t tmpfs -o size=16k none '" + small_fs.string() + "' && exec '" + kHangbench +
                        "' run --matrix '" + kFixtures + "small.toml' --out '" + (small_fs / "out").string() + "'";
  int rc = wait_exit_code(spawn({"unshare", "-m", "sh", "-c", command}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 3) << log;
  EXPECT_NE(log.find((small_fs / "out" / "hangbench.sqlite").string()), std::string::npos) << log;
  EXPECT_TRUE(log.find("disk is full") != std::string::npos || log.find("No space left") != std::string::npos) << log;
}

TEST_F(LifecycleTest, ReportOfAnUnknownRunExitsTwoListingTheRuns) {
  fs::path out = dir_ / "out";
  ASSERT_EQ(
      wait_exit_code(hangbench({"run", "--matrix", kFixtures + "pass_one.toml", "--out", out.string()}, dir_ / "log")),
      0)
      << slurp(dir_ / "log");
  int rc = wait_exit_code(hangbench({"report", "--out", out.string(), "--run", "no-such-run"}, dir_ / "report.log"));
  std::string log = slurp(dir_ / "report.log");
  EXPECT_EQ(rc, 2) << log;
  EXPECT_NE(log.find("--run no-such-run: no such run"), std::string::npos) << log;
}

TEST_F(LifecycleTest, BareHangbenchPrintsHelpAndRunsNothing) {
  fs::path work = dir_ / "cwd";
  fs::create_directories(work);
  std::string command = "cd '" + work.string() + "' && exec '" + kHangbench + "'";
  int rc = wait_exit_code(spawn({"sh", "-c", command}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 2) << log;
  EXPECT_NE(log.find("Commands:"), std::string::npos) << log;
  EXPECT_TRUE(fs::is_empty(work)) << "bare hangbench started a run";
}

TEST_F(LifecycleTest, AWorkloadThatCannotStartIsInfraWithItsReasonEverywhere) {
  fs::path out = dir_ / "out";
  int rc = wait_exit_code(hangbench({"run", "--matrix", kFixtures + "missing_workload.toml", "--out", out.string(),
                                     "--format", "md,json,csv,junit,html"},
                                    dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 3) << log;
  const std::string reason = "hb_test_no_such_program";
  EXPECT_NE(log.find("could not run (INFRA): cannot start"), std::string::npos) << log;
  EXPECT_NE(log.find("INFRA"), std::string::npos) << log;
  EXPECT_EQ(log.find(" complete;"), std::string::npos) << "a run of INFRA only said 'complete': " << log;
  for (const char* report : {"report.md", "report.json", "report.csv", "report.xml", "report.html"}) {
    EXPECT_NE(slurp(out / report).find(reason), std::string::npos) << report << " does not give the reason";
  }
}

TEST_F(LifecycleTest, GarbageOnThePhaseChannelGivesOneWarningPerTrial) {
  fs::path out = dir_ / "out";
  int rc =
      wait_exit_code(hangbench({"run", "--matrix", kFixtures + "garbage.toml", "--out", out.string()}, dir_ / "log"));
  std::string log = slurp(dir_ / "log");
  EXPECT_EQ(rc, 0) << log;
  int warnings = 0;
  for (size_t at = 0; (at = log.find("malformed phase line", at)) != std::string::npos; ++at) ++warnings;
  EXPECT_EQ(warnings, 3) << log;
  EXPECT_NE(log.find("malformed phase line ignored, and 4999 more after it"), std::string::npos) << log;
}

}  // namespace
}  // namespace hangbench
