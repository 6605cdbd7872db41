// `hangbench watch` end to end with real processes (hb_test_watch_job): a hang is
// flagged within idle + 2 s with its finding, a progressing job never is, the job's
// exit code and signal pass through, a killed watcher leaves its job running
// unless --kill-after owns it, and the evidence exists when the job's own
// watchdog ends it. Every test ends what it started.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kJob = std::string(HB_BINARY_DIR) + "/workloads/test_workloads/hb_test_watch_job";

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

class WatchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    dir_ = fs::temp_directory_path() / ("hb-watch-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (int pid : started_) ::kill(pid, SIGKILL);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    fs::remove_all(dir_);
  }

  // Starts argv in the test's folder, stdout and stderr to files there; env: extra "NAME=value".
  int start(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const std::string cwd = dir_.string();
    int pid = ::fork();
    if (pid == 0) {
      if (::chdir(cwd.c_str()) != 0) ::_exit(126);
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      for (const auto& v : env) ::putenv(const_cast<char*>(v.c_str()));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    started_.push_back(pid);
    return pid;
  }

  // The wait status of pid, or nullopt when it has not ended within bound_s.
  static std::optional<int> wait_for(int pid, double bound_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(bound_s);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::vector<nlohmann::json> events(const std::string& name = "events.jsonl") const {
    std::vector<nlohmann::json> out;
    std::istringstream in(read(name));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  // Rank 0 with PyTorch's Flight Recorder on: a buffer, a dump pipe and a dump prefix under fr/.
  std::vector<std::string> flight_recorder_env() const {
    const std::string fr = (dir_ / "fr").string();
    fs::create_directories(fr);
    return {"RANK=0", "TORCH_NCCL_TRACE_BUFFER_SIZE=100", "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=" + fr + "/pipe_",
            "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=" + fr + "/trace_"};
  }

  // The pid that wrote the first phase line of the phase file, once there is one.
  int job_pid_from(const std::string& phase_file, double bound_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(bound_s);
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream in(phase_file);
      std::string line;
      if (std::getline(in, line) && !line.empty()) return nlohmann::json::parse(line)["pid"].get<int>();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

  static bool alive(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    return close != std::string::npos && text.size() > close + 2 && text[close + 2] != 'Z';
  }

  static bool gone_within(int pid, double bound_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(bound_s);
    while (std::chrono::steady_clock::now() < until) {
      ::waitpid(pid, nullptr, WNOHANG);  // an orphan that came back to the test
      if (!alive(pid)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  fs::path dir_;
  std::vector<int> started_;
};

TEST_F(WatchCli, APipeHangIsFlaggedWithinIdlePlus2SecondsWithItsFinding) {
  const double t0 = unix_now();
  const int w = start({kHangbench, "watch", "--idle", "3", "--events", "events.jsonl", "--evidence", "evidence",
                       "--prometheus", "hb.prom", "--kill-after", "0", "--", kJob, "--mode=pipe"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status) << read("stderr");
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 124) << "hung, evidence captured, ended by --kill-after\n" << read("stderr");
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u) << read("events.jsonl");
  EXPECT_EQ(ev[0]["event"], "hang");
  EXPECT_EQ(ev[0]["shape"], "pipe-writer-held");
  EXPECT_LE(ev[0]["seconds_since_progress"].get<double>(), 3 + 2);
  // Its start (its first output, seen at the first or second poll) is its last progress; a second
  // more for the watcher and the job to start on a loaded machine.
  EXPECT_LE(ev[0]["t"].get<double>() - t0, 3 + 1 + 2 + 1) << "the start of the job is its last progress";
  EXPECT_TRUE(fs::exists(dir_ / "evidence" / "diagnosis.txt"));
  const auto doc = nlohmann::json::parse(read("evidence/diagnosis.json"));
  EXPECT_EQ(doc["watch"]["idle_s"], 3.0);
  EXPECT_NE(read("evidence/diagnosis.txt").find("hb_test_watch_job"), std::string::npos);
  EXPECT_NE(read("hb.prom").find("hangbench_hang{job=\"hb_test_watch_job\",shape=\"pipe-writer-held\""),
            std::string::npos)
      << read("hb.prom");
  EXPECT_NE(read("stdout").find("mode pipe"), std::string::npos) << "the job's output passes through";
}

TEST_F(WatchCli, AMutexDeadlockIsFlagged) {
  const int w = start({kHangbench, "watch", "--idle", "2", "--events", "events.jsonl", "--evidence", "evidence",
                       "--kill-after", "0", "--", kJob, "--mode=deadlock"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 124) << read("stderr");
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_LE(ev[0]["seconds_since_progress"].get<double>(), 2 + 2);
  const std::string text = read("evidence/diagnosis.txt");
  EXPECT_NE(text.find("futex"), std::string::npos) << "both threads wait in a futex:\n" << text;
}

TEST_F(WatchCli, AProgressingJobIsNeverFlaggedAndItsExitCodePassesThrough) {
  const int w = start({kHangbench, "watch", "--idle", "3", "--events", "events.jsonl", "--", kJob, "--mode=progress",
                       "--every-ms=1000", "--for-ms=9000", "--exit=7"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 7) << read("stderr");
  EXPECT_TRUE(events().empty()) << read("events.jsonl");
  EXPECT_NE(read("stdout").find("step 8"), std::string::npos) << read("stdout");
}

// The long case: progress every 20 s under --idle 30 for 3 minutes is never flagged.
TEST_F(WatchCli, SlowProgressEvery20SecondsUnderIdle30For3MinutesIsNeverFlagged) {
  const int w = start({kHangbench, "watch", "--idle", "30", "--events", "events.jsonl", "--", kJob, "--mode=progress",
                       "--every-ms=20000", "--for-ms=180000"});
  auto status = wait_for(w, 280);
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0) << read("stderr");
  EXPECT_TRUE(events().empty()) << read("events.jsonl");
}

TEST_F(WatchCli, TheJobsSignalPassesThrough) {
  const int w = start({kHangbench, "watch", "--", kJob, "--mode=signal", "--signal=15"});
  auto status = wait_for(w, 60);
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFSIGNALED(*status)) << read("stderr");
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);
}

// The watcher stands in for its job: a SIGTERM to it goes to the job, and the job's
// death by that signal comes back as the watcher's.
TEST_F(WatchCli, ASignalToTheWatcherGoesToTheJob) {
  const std::string phases = (dir_ / "phases.jsonl").string();
  const int w = start({kHangbench, "watch", "--", kJob, "--mode=progress", "--every-ms=100", "--for-ms=60000"},
                      {"HANGBENCH_PHASE_FILE=" + phases});
  const int job = job_pid_from(phases, 30);
  ASSERT_GT(job, 0);
  started_.push_back(job);
  ::kill(w, SIGTERM);
  auto status = wait_for(w, 30);
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFSIGNALED(*status)) << read("stderr");
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);
  EXPECT_TRUE(gone_within(job, 30));
}

TEST_F(WatchCli, SignalOptionSignalsTheLauncherAfterTheEvidence) {
  const int w = start(
      {kHangbench, "watch", "--idle", "2", "--events", "events.jsonl", "--signal", "TERM", "--", kJob, "--mode=pipe"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFSIGNALED(*status)) << "the job died of the signal watch sent, and so does watch\n" << read("stderr");
  EXPECT_EQ(WTERMSIG(*status), SIGTERM);
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["action"], "signal 15");
  EXPECT_TRUE(fs::exists(dir_ / "hangbench-watch-evidence" / "diagnosis.json"));
}

TEST_F(WatchCli, ACommandThatCannotStartIsExit3) {
  const int w = start({kHangbench, "watch", "--", "/nonexistent/train"});
  auto status = wait_for(w, 60);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 3);
  EXPECT_NE(read("stderr").find("cannot start /nonexistent/train"), std::string::npos) << read("stderr");
}

TEST_F(WatchCli, AKilledWatcherLeavesItsJobRunning) {
  const std::string phases = (dir_ / "phases.jsonl").string();
  const int w =
      start({kHangbench, "watch", "--idle", "30", "--", kJob, "--mode=progress", "--every-ms=100", "--for-ms=60000"},
            {"HANGBENCH_PHASE_FILE=" + phases});
  const int job = job_pid_from(phases, 30);
  ASSERT_GT(job, 0);
  started_.push_back(job);
  ::kill(w, SIGKILL);
  ASSERT_TRUE(wait_for(w, 30));
  // Still running: its phase file keeps growing after the watcher is gone.
  const auto size = fs::file_size(phases);
  bool grew = false;
  for (int i = 0; i < 1500 && !grew; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    grew = fs::file_size(phases) > size;
  }
  EXPECT_TRUE(grew);
  EXPECT_TRUE(alive(job));
}

TEST_F(WatchCli, WithKillAfterTheJobDiesWithItsWatcher) {
  const std::string phases = (dir_ / "phases.jsonl").string();
  const int w = start({kHangbench, "watch", "--idle", "30", "--kill-after", "5", "--", kJob, "--mode=progress",
                       "--every-ms=100", "--for-ms=60000"},
                      {"HANGBENCH_PHASE_FILE=" + phases});
  const int job = job_pid_from(phases, 30);
  ASSERT_GT(job, 0);
  started_.push_back(job);
  ::kill(w, SIGKILL);
  ASSERT_TRUE(wait_for(w, 30));
  EXPECT_TRUE(gone_within(job, 30));
}

// The job's own watchdog (as PyTorch's ends a hung NCCL rank) comes after --idle:
// the evidence is there, and the job's exit code passes through.
TEST_F(WatchCli, TheEvidenceExistsWhenTheJobsOwnWatchdogEndsIt) {
  const int w = start({kHangbench, "watch", "--idle", "2", "--events", "events.jsonl", "--evidence", "evidence", "--",
                       kJob, "--mode=pipe", "--watchdog-ms=8000"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 6) << "the watchdog's own exit code\n" << read("stderr");
  EXPECT_NE(read("stderr").find("watchdog: timeout"), std::string::npos);
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  // The job's watchdog thread sleeps on its timer in the process that holds the pipe's
  // write end: the wait-for graph counts a sleeping thread as able to write, so the
  // diagnosis may name no shape; watch still flags the lack of progress.
  EXPECT_TRUE(ev[0]["shape"] == "pipe-writer-held" || ev[0]["shape"] == "no-progress") << ev[0].dump();
  EXPECT_TRUE(fs::exists(dir_ / "evidence" / "diagnosis.json"));
  EXPECT_TRUE(fs::exists(dir_ / "evidence" / "diagnosis.txt"));
}

TEST_F(WatchCli, AttachedToAHungPidItCapturesAndLeavesTheJob) {
  const int job = start({kJob, "--mode=pipe"});
  const int w = start({kHangbench, "watch", "--pid", std::to_string(job), "--idle", "2", "--events", "events.jsonl",
                       "--evidence", "evidence"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 124) << read("stderr");
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]["job"], "pid-" + std::to_string(job));
  EXPECT_TRUE(fs::exists(dir_ / "evidence" / "diagnosis.json"));
  EXPECT_TRUE(alive(job)) << "no action asked for: the job is left as it was";
}

// The nightly job runs a user's command under watch (NIGHTLY_WATCH): a hang fails the
// night (exit 1), its evidence is in OUT, and its event joins history.md.
TEST_F(WatchCli, TheNightlyJobWatchesAUsersCommandAndListsItsHangOnTheHistoryPage) {
  const std::string src = HB_SOURCE_DIR, bin = HB_BINARY_DIR;
  const std::string command =
      "HANGBENCH='" + kHangbench + "' HANGBENCH_WORKLOADS_DIR='" + bin + "/workloads' NIGHTLY_MATRICES='" + src +
      "/workloads/test_workloads/matrix.toml::behaviour=pass' NIGHTLY_TRIALS=1 NIGHTLY_WATCH='" + kJob +
      " --mode=pipe' NIGHTLY_WATCH_IDLE=2 NIGHTLY_WATCH_KILL_AFTER=0 bash '" + src + "/ci/nightly.sh' --history '" +
      (dir_ / "history" / "history.sqlite").string() + "' --out '" + (dir_ / "out").string() + "' > '" +
      (dir_ / "log").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << "a hang fails the night\n" << read("log");
  EXPECT_TRUE(fs::exists(dir_ / "out" / "watch-evidence" / "diagnosis.json")) << read("log");
  EXPECT_NE(read("out/nightly.md").find("| watch: hb_test_watch_job | 1 hang(s) | 124 |"), std::string::npos)
      << read("out/nightly.md");
  const std::string history = read("out/history.md");
  EXPECT_NE(history.find("## Watched commands (hangbench watch)"), std::string::npos) << history;
  EXPECT_NE(history.find("| pipe-writer-held |"), std::string::npos) << history;
  EXPECT_EQ(events("history/watch-events.jsonl").size(), 1u) << "kept beside the history for later nights";
}

// A rank whose only progress is its Flight Recorder's completed collectives (no
// phase line after init, no output) is not flagged while they advance, and is once
// they stop.
TEST_F(WatchCli, FlightRecorderSequenceNumbersCountAsProgressUntilTheyStop) {
  const double t0 = unix_now();
  const int w = start({kHangbench, "watch", "--idle", "3", "--events", "events.jsonl", "--evidence", "evidence",
                       "--kill-after", "0", "--", kJob, "--mode=fr", "--every-ms=250", "--for-ms=8000"},
                      flight_recorder_env());
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 124) << read("stderr");
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u) << read("events.jsonl");
  EXPECT_NE(std::find(ev[0]["signals"].begin(), ev[0]["signals"].end(), "fr"), ev[0]["signals"].end()) << ev[0];
  EXPECT_GE(ev[0]["t"].get<double>() - t0, 8) << "not flagged while the collectives completed";
  EXPECT_LE(ev[0]["seconds_since_progress"].get<double>(), 3 + 2);
}

// A rank whose environment turns the Flight Recorder on but which never dumps (on a GPU:
// the GIL held in a native call) while it spins: flagged, its CPU time not counted as
// progress. The same spinning job without the Flight Recorder is progressing (cpu).
TEST_F(WatchCli, ASpinningRankWhoseFlightRecorderNeverAnswersIsFlagged) {
  const int w = start({kHangbench, "watch", "--idle", "3", "--events", "events.jsonl", "--evidence", "evidence",
                       "--no-stacks", "--kill-after", "0", "--", kJob, "--mode=spin"},
                      flight_recorder_env());
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 124) << read("stderr");
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u) << read("events.jsonl");
  EXPECT_NE(std::find(ev[0]["signals"].begin(), ev[0]["signals"].end(), "fr"), ev[0]["signals"].end()) << ev[0];
  EXPECT_EQ(std::find(ev[0]["signals"].begin(), ev[0]["signals"].end(), "cpu"), ev[0]["signals"].end()) << ev[0];
  EXPECT_LE(ev[0]["seconds_since_progress"].get<double>(), 3 + 2);
}

// The same rank that logs PyTorch's "preparing to dump debug info" at each of watch's
// requests (seen on the H100: those lines kept the GIL convoy "progressing" on output).
TEST_F(WatchCli, TheDumpLogLinesWatchsRequestsProvokeAreNotProgress) {
  const int w = start({kHangbench, "watch", "--idle", "3", "--events", "events.jsonl", "--evidence", "evidence",
                       "--no-stacks", "--kill-after", "0", "--", kJob, "--mode=fr-silent"},
                      flight_recorder_env());
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 124) << read("stderr");
  EXPECT_NE(read("stderr").find("preparing to dump debug info"), std::string::npos)
      << "the job never logged a dump request: the test tests nothing";
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u) << read("events.jsonl");
  EXPECT_LE(ev[0]["seconds_since_progress"].get<double>(), 3 + 2);
}

TEST_F(WatchCli, ASpinningJobWithoutTheFlightRecorderIsProgressing) {
  const int w = start({kHangbench, "watch", "--idle", "2", "--events", "events.jsonl", "--evidence", "evidence",
                       "--no-stacks", "--", kJob, "--mode=spin"},
                      {"RANK=0"});
  EXPECT_FALSE(wait_for(w, 7)) << "the watch ended: " << read("stderr");
  ::kill(w, SIGTERM);  // the watcher passes it to the job
  ASSERT_TRUE(wait_for(w, 60));
  EXPECT_TRUE(events().empty()) << read("events.jsonl");
}

// An attached job's phase file is the one its own environment names.
TEST_F(WatchCli, AttachedItReadsThePhaseFileTheJobsEnvironmentNames) {
  const std::string phases = (dir_ / "phases.jsonl").string();
  const int job =
      start({kJob, "--mode=progress", "--every-ms=300", "--for-ms=6000"}, {"HANGBENCH_PHASE_FILE=" + phases});
  ASSERT_GT(job_pid_from(phases, 30), 0);
  const int w = start({kHangbench, "watch", "--pid", std::to_string(job), "--idle", "2", "--signals", "phase",
                       "--events", "events.jsonl", "--no-stacks"});
  auto status = wait_for(w, 120);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 0) << "the job ended without a hang\n" << read("stderr");
  EXPECT_TRUE(events().empty()) << read("events.jsonl");
}

TEST_F(WatchCli, BadUsageIsExit2) {
  for (auto argv : std::vector<std::vector<std::string>>{{kHangbench, "watch"},
                                                         {kHangbench, "watch", "--pid", "1", "--", kJob},
                                                         {kHangbench, "watch", "--signals", "collectives", "--", kJob},
                                                         {kHangbench, "watch", "--pid", "999999999"}}) {
    const int w = start(argv);
    auto status = wait_for(w, 60);
    ASSERT_TRUE(status);
    EXPECT_EQ(WEXITSTATUS(*status), 2) << argv.back();
  }
}

}  // namespace
