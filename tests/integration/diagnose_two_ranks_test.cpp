// Issue 27, point 1, live: two ranks joined by TCP (as NCCL's Socket transport
// joins ranks on one host), rank 0's end pinned by the worker it forked, rank 1
// waiting for an EOF that does not come. `diagnose --tree` of the launcher names
// the cross-process alias: rank 1 waits, rank 0's child holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "hangbench/diagnose.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/render.hpp"

using namespace hangbench::diagnose;
using ::testing::HasSubstr;

namespace {

const std::string kScript = std::string(HB_SOURCE_DIR) + "/tests/integration/python/two_ranks_alias.py";

struct Ranks {
  int launcher = 0, rank0 = 0, rank1 = 0, worker = 0;
};

// Starts the launcher and reads its JSON line (the ranks are connected and rank 0 closed its end).
Ranks start() {
  int out[2];
  if (::pipe(out) != 0) return {};
  Ranks r;
  r.launcher = ::fork();
  if (r.launcher == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::execlp("python3", "python3", kScript.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_object()) {
    r.rank0 = j.value("rank0", 0);
    r.rank1 = j.value("rank1", 0);
    r.worker = j.value("worker", 0);
  }
  return r;
}

}  // namespace

TEST(DiagnoseTwoRanks, ARanksConnectionPinnedByTheOtherRanksWorker) {
  Ranks r = start();
  Diagnosis d;
  const Finding* finding = nullptr;
  if (r.worker > 0) {
    DiagnoseRequest request;
    request.tree_root = r.launcher;
    for (int attempt = 0; attempt < 400 && !finding; ++attempt) {  // until rank 1 sits in poll
      d = diagnose(request);
      for (const auto& f : d.findings)
        if (f.rule == "nccl-descriptor-alias") finding = &f;
      if (!finding) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  for (int pid : {r.worker, r.rank0, r.rank1, r.launcher})
    if (pid > 0) ::kill(pid, SIGKILL);
  ::waitpid(r.launcher, nullptr, 0);

  ASSERT_GT(r.worker, 0) << "the launcher did not report its ranks (python3 on PATH?)";
  ASSERT_NE(finding, nullptr) << render_text(d.snapshot, d.findings);
  EXPECT_EQ(finding->severity, Severity::Hang);
  EXPECT_EQ(finding->pids.front(), r.rank1);
  EXPECT_THAT(finding->pids, ::testing::Contains(r.worker));
  auto headline = headline_lines(d.snapshot, d.findings);
  ASSERT_GE(headline.size(), 3u) << render_text(d.snapshot, d.findings);
  EXPECT_THAT(headline[1], HasSubstr("WAITS    rank 1, pid " + std::to_string(r.rank1)));
  EXPECT_THAT(headline[2], HasSubstr("HELD BY  pid " + std::to_string(r.worker)));
  EXPECT_THAT(headline[2], HasSubstr("a child of rank 0, pid " + std::to_string(r.rank0)));
}
