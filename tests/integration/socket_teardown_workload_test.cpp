// Runs the socket_teardown program itself, as the harness would, and reads the
// phases it reports: the hanging configuration waits for its helper, the
// healthy ones finish although the helper lives as long as the rank.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kWorkload = std::string(HB_BINARY_DIR) + "/workloads/socket_teardown/socket_teardown";

struct WorkloadRun {
  std::optional<int> exit_code;  // empty: still running when killed (see `stopped`)
  bool stopped = false;          // killed once the run's stop condition held
  std::vector<json> lines;       // the phase file

  std::optional<double> phase_time(const std::string& name) const {
    for (const auto& l : lines)
      if (l.value("phase", "") == name) return l.at("t").get<double>();
    return std::nullopt;
  }
  std::vector<json> metrics(const std::string& name) const {
    std::vector<json> out;
    for (const auto& l : lines)
      if (l.value("metric", "") == name) out.push_back(l);
    return out;
  }
};

class SocketTeardownWorkload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("socket_teardown_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the workload until it exits. With `stop_when`, it is killed (SIGKILL)
  // as soon as the phase lines written so far satisfy it (then `stopped`). Past
  // `bound` it is killed too, with neither an exit code nor `stopped`: a bound
  // only to fail instead of hanging.
  WorkloadRun run(std::vector<std::string> args, std::chrono::milliseconds bound,
                  const std::function<bool(const WorkloadRun&)>& stop_when = {}) {
    const fs::path phase_file = dir_ / "phases.jsonl";
    fs::remove(phase_file);
    args.insert(args.begin(), kWorkload);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::setenv("HANGBENCH_PHASE_FILE", phase_file.c_str(), 1);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, kWorkload.c_str(), nullptr, nullptr, argv.data(), environ);
    ::unsetenv("HANGBENCH_PHASE_FILE");
    EXPECT_EQ(rc, 0) << "cannot start " << kWorkload;
    WorkloadRun result;
    if (rc != 0) return result;
    const auto give_up = std::chrono::steady_clock::now() + bound;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      result.stopped = stop_when && stop_when(lines_so_far(phase_file));
      if (result.stopped || std::chrono::steady_clock::now() >= give_up) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        status = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    std::ifstream in(phase_file);
    for (std::string line; std::getline(in, line);) result.lines.push_back(json::parse(line));
    return result;
  }

  // The complete lines of a phase file that is still being written.
  static WorkloadRun lines_so_far(const fs::path& phase_file) {
    WorkloadRun so_far;
    std::ifstream in(phase_file);
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded()) so_far.lines.push_back(std::move(j));
    }
    return so_far;
  }

  fs::path dir_;
};

// A process is gone (or a zombie nobody reaped) within a bounded wait.
bool process_ends_within(pid_t pid, std::chrono::milliseconds d) {
  const auto give_up = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < give_up) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    if (!(stat >> pid_field >> comm >> state) || state == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Once the teardown has begun, the workload samples the client end's TCP state
// while it waits for the service: ESTABLISHED after close() means no FIN was sent,
// so the service can never see EOF. It is stopped after two such samples.
TEST_F(SocketTeardownWorkload, CloseOnlyWithALiveHelperNeverFinishes) {
  for (const char* topology : {"--topology=thread", "--topology=process"}) {
    WorkloadRun r = run({"--close=close-only", "--gate=after", topology, "--poll-timeout-ms=100"},
                        std::chrono::seconds(60), [](const WorkloadRun& so_far) {
                          return so_far.phase_time("teardown_begin") && so_far.metrics("tcp_state").size() >= 2;
                        });
    EXPECT_TRUE(r.stopped) << topology << ": no two kernel samples after teardown_begin";
    EXPECT_FALSE(r.exit_code.has_value()) << topology << ": the teardown finished";
    EXPECT_TRUE(r.phase_time("teardown_begin").has_value()) << topology;
    EXPECT_FALSE(r.phase_time("eof_seen").has_value()) << topology;
    EXPECT_FALSE(r.phase_time("teardown_end").has_value()) << topology;
    auto states = r.metrics("tcp_state");
    ASSERT_FALSE(states.empty()) << topology << ": no kernel samples while waiting";
    for (const auto& s : states) EXPECT_EQ(s.at("value"), "ESTABLISHED") << topology;
    // The helper dies with the rank (parent-death signal), as a DataLoader worker does.
    auto helper = r.metrics("helper_pid");
    ASSERT_EQ(helper.size(), 1u);
    EXPECT_TRUE(process_ends_within(helper[0].at("value").get<int>(), std::chrono::seconds(10)));
  }
}

TEST_F(SocketTeardownWorkload, CloseOnlyFinishesOnlyAfterTheHelperExits) {
  for (const char* topology : {"--topology=thread", "--topology=process"}) {
    WorkloadRun r = run({"--close=close-only", "--gate=after", topology, "--helper-lifetime=1.0",
                         "--poll-timeout-ms=100", "--sample-interval-ms=100"},
                        std::chrono::seconds(30));
    ASSERT_EQ(r.exit_code, 0) << topology;
    auto helper_exit = r.phase_time("helper_exit");
    auto eof = r.phase_time("eof_seen");
    ASSERT_TRUE(helper_exit && eof) << topology;
    EXPECT_GE(*eof, *helper_exit) << topology << ": EOF must wait for the last alias";
    EXPECT_GE(*r.phase_time("teardown_end"), *r.phase_time("service_exit")) << topology;
    EXPECT_EQ(r.metrics("tcp_state").front().at("value"), "ESTABLISHED") << topology;
  }
}

// Every cell the default matrix expects to be healthy finishes although its
// helper (if any) lives until the rank dies.
class SocketTeardownHealthyCell
    : public SocketTeardownWorkload,
      public ::testing::WithParamInterface<std::tuple<std::string, std::string, std::string>> {};

TEST_P(SocketTeardownHealthyCell, TeardownCompletes) {
  auto [close, gate, topology] = GetParam();
  WorkloadRun r =
      run({"--close=" + close, "--gate=" + gate, "--topology=" + topology, "--poll-timeout-ms=100", "--hold-ms=20"},
          std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, 0);
  for (const char* phase : {"connect", "init_done", "teardown_begin", "service_exit", "teardown_end"})
    EXPECT_TRUE(r.phase_time(phase).has_value()) << phase;
  EXPECT_EQ(r.phase_time("fork").has_value(), gate != "none");
  EXPECT_FALSE(r.phase_time("helper_exit").has_value()) << "the helper outlived nothing";
  auto reasons = r.metrics("retire_reason");
  ASSERT_FALSE(reasons.empty());
  if (gate == "graceful") {
    EXPECT_FALSE(r.phase_time("eof_seen").has_value()) << "messages drain npeers, no EOF needed";
  } else {
    EXPECT_TRUE(r.phase_time("eof_seen").has_value());
  }
}

INSTANTIATE_TEST_SUITE_P(ShutdownAfterAndCloseOnlyGates, SocketTeardownHealthyCell,
                         ::testing::Combine(::testing::Values("close-only"),
                                            ::testing::Values("before", "none", "close-range", "exec-cloexec",
                                                              "graceful"),
                                            ::testing::Values("thread", "process")));
INSTANTIATE_TEST_SUITE_P(ShutdownFix, SocketTeardownHealthyCell,
                         ::testing::Combine(::testing::Values("shutdown"), ::testing::Values("after", "graceful"),
                                            ::testing::Values("thread", "process")));

TEST_F(SocketTeardownWorkload, BadArgumentsExitWithTwo) {
  EXPECT_EQ(run({"--gate=sideways"}, std::chrono::seconds(10)).exit_code, 2);
  EXPECT_EQ(run({"--unknown=1"}, std::chrono::seconds(10)).exit_code, 2);
}

TEST_F(SocketTeardownWorkload, HelpExitsWithZero) { EXPECT_EQ(run({"--help"}, std::chrono::seconds(10)).exit_code, 0); }

}  // namespace
