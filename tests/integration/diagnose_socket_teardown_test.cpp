// Diagnoses the socket workload (workloads/socket_teardown) from outside while it
// hangs: close-only teardown with a helper forked after the connection. The
// diagnosis must name the helper as the holder of the client end and fire the
// descriptor-alias rule, in both topologies: the service as a thread of the rank,
// and as a separate process (the holder is then a child of another process than
// the poller: the cross-process alias).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "hangbench/diagnose.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/render.hpp"

using namespace hangbench::diagnose;
using ::testing::HasSubstr;

namespace {

const std::string kWorkload = std::string(HB_BINARY_DIR) + "/workloads/socket_teardown/socket_teardown";

// The helper pid from the phase file once the teardown has begun; 0 while not yet.
int helper_pid_after_teardown_began(const std::string& phase_file) {
  std::ifstream in(phase_file);
  int helper = 0;
  bool teardown = false;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    if (j.value("metric", "") == "helper_pid") helper = static_cast<int>(j["value"].get<double>());
    if (j.value("phase", "") == "teardown_begin") teardown = true;
  }
  return teardown ? helper : 0;
}

}  // namespace

class DiagnoseSocketTeardown : public ::testing::TestWithParam<std::string> {};

TEST_P(DiagnoseSocketTeardown, HungCloseOnlyTeardownNamesTheHelper) {
  const std::string topology = "--topology=" + GetParam();
  ASSERT_TRUE(std::filesystem::exists(kWorkload)) << kWorkload << " is not built";
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  auto phase_file = std::filesystem::path(HB_BINARY_DIR) / "test-output" /
                    ("diagnose-socket-teardown-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::create_directories(phase_file.parent_path());
  std::filesystem::remove(phase_file);

  pid_t rank = ::fork();
  if (rank == 0) {
    ::setenv("HANGBENCH_PHASE_FILE", phase_file.c_str(), 1);
    ::execl(kWorkload.c_str(), kWorkload.c_str(), "--close=close-only", "--gate=after", topology.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int helper = 0;
  for (int i = 0; i < 400 && helper == 0; ++i) {  // bounded wait for the teardown to begin
    helper = helper_pid_after_teardown_began(phase_file.string());
    if (helper == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  Diagnosis d;
  const Finding* finding = nullptr;
  if (helper != 0) {
    DiagnoseRequest request;
    request.tree_root = rank;
    for (int attempt = 0; attempt < 200 && !finding; ++attempt) {  // the poller wakes every 500 ms
      d = diagnose(request);
      for (const auto& f : d.findings)
        if (f.rule == "nccl-descriptor-alias") finding = &f;
      if (!finding) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  if (helper > 0) ::kill(helper, SIGKILL);
  ::kill(rank, SIGKILL);
  ::waitpid(rank, nullptr, 0);
  for (int i = 0; i < 2000 && (::waitpid(-1, nullptr, WNOHANG) > 0 || (helper > 0 && ::kill(helper, 0) == 0)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::filesystem::remove(phase_file);

  ASSERT_NE(helper, 0) << "the workload never reported teardown_begin with a helper_pid";
  ASSERT_NE(finding, nullptr) << render_text(d.snapshot, d.findings);
  EXPECT_THAT(finding->summary, HasSubstr("pid " + std::to_string(helper) + " "));
  EXPECT_THAT(finding->pids, ::testing::Contains(helper));
  EXPECT_THAT(summary_paragraph(d.snapshot, d.findings), ::testing::Not(HasSubstr("No hang found")));
  auto headline = headline_lines(d.snapshot, d.findings);
  ASSERT_GE(headline.size(), 3u) << render_text(d.snapshot, d.findings);
  EXPECT_THAT(headline[2], HasSubstr("HELD BY  pid " + std::to_string(helper)));
  auto sentences = holder_sentences(d.snapshot);
  ASSERT_FALSE(sentences.empty());
  EXPECT_THAT(::testing::PrintToString(sentences),
              HasSubstr("a child that pid " + std::to_string(rank) + " forked at"));
}

INSTANTIATE_TEST_SUITE_P(BothTopologies, DiagnoseSocketTeardown, ::testing::Values("thread", "process"));
