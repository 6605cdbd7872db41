// `hangbench diagnose` against real hung processes made here: a TCP
// self-connection whose client end only a forked child holds, a reader blocked on
// a pipe whose write end a grandchild holds, a SIGSTOPped process. Each test ends
// and reaps every process it made (the test is a child subreaper for that).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "hangbench/diagnose.hpp"
#include "hangbench/evidence.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/render.hpp"

using namespace hangbench::diagnose;
using ::testing::HasSubstr;

namespace {

struct Pids {
  int main = 0;
  int helper = 0;
};

// Ends pid and everything it left behind; the test is a subreaper, so orphans come back to it.
void end_and_reap(std::initializer_list<int> pids) {
  for (int pid : pids)
    if (pid > 0) ::kill(pid, SIGKILL);
  // A helper becomes our child only once its parent is gone: wait until each pid is
  // reaped by us, or gone (reaped by someone else), with a generous bound.
  for (int pid : pids) {
    for (int i = 0; pid > 0 && i < 5000; ++i) {
      pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      if (r == pid || (r < 0 && ::kill(pid, 0) != 0)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

Pids read_pids(int fd) {
  Pids p;
  EXPECT_EQ(::read(fd, &p, sizeof p), static_cast<ssize_t>(sizeof p));
  ::close(fd);
  return p;
}

void* poll_until_eof(void* arg) {
  int fd = *static_cast<int*>(arg);
  char byte;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, -1);
    if (::recv(fd, &byte, 1, 0) <= 0) return nullptr;
  }
}

// The process under diagnosis: a listener, a connection to itself, a thread that
// polls the accepted end until EOF, and a main thread that joins it (as commFree
// joins the NCCL proxy service thread). A child forked after the connection holds
// the client end; the parent then closes its own copy.
[[noreturn]] void run_self_connection_rank(int report_fd, const char* poller_name) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 4) != 0) ::_exit(10);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  int client = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(11);
  static int accepted = ::accept(listener, nullptr, nullptr);
  if (accepted < 0) ::_exit(12);
  int helper = ::fork();
  if (helper == 0) {
    for (;;) ::pause();  // holds every descriptor, like a DataLoader worker
  }
  ::close(client);  // not the last reference: the peer sees nothing
  pthread_t poller;
  ::pthread_create(&poller, nullptr, poll_until_eof, &accepted);
  ::pthread_setname_np(poller, poller_name);
  Pids p{::getpid(), helper};
  if (::write(report_fd, &p, sizeof p) != static_cast<ssize_t>(sizeof p)) ::_exit(13);
  ::close(report_fd);
  ::pthread_join(poller, nullptr);
  ::_exit(0);
}

Pids start_self_connection_rank(const char* poller_name) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t rank = ::fork();
  if (rank == 0) {
    ::close(fds[0]);
    run_self_connection_rank(fds[1], poller_name);
  }
  ::close(fds[1]);
  return read_pids(fds[0]);
}

// Diagnoses until `rule` fires or a generous bound passes: the poller may not be
// inside poll() yet when the process reports ready.
Diagnosis diagnose_until(const DiagnoseRequest& request, const std::string& rule) {
  Diagnosis d;
  for (int attempt = 0; attempt < 200; ++attempt) {
    d = diagnose(request);
    for (const auto& f : d.findings)
      if (f.rule == rule) return d;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return d;
}

const Finding* find_rule(const Diagnosis& d, const std::string& rule) {
  for (const auto& f : d.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

class DiagnoseLive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
};

}  // namespace

TEST_F(DiagnoseLive, SelfConnectionHeldByForkedChildNamesTheChild) {
  Pids p = start_self_connection_rank("svc-poller");
  DiagnoseRequest request;
  request.pids = {p.main};  // only the rank: the child must be found as a holder
  Diagnosis d = diagnose_until(request, "nccl-descriptor-alias");
  end_and_reap({p.helper, p.main});

  ASSERT_EQ(d.exit_code, 0) << d.error;
  const Finding* f = find_rule(d, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr) << render_text(d.snapshot, d.findings);
  EXPECT_EQ(f->title, "descriptor-alias teardown shape");
  EXPECT_THAT(f->summary, HasSubstr("pid " + std::to_string(p.helper) + " "));
  EXPECT_THAT(f->summary, HasSubstr("a child that pid " + std::to_string(p.main) + " forked at"));
  EXPECT_THAT(f->pids, ::testing::Contains(p.helper));
  const ProcessSnapshot* helper = d.snapshot.find(p.helper);
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->target) << "the child was not asked for; it was found as a holder";
  auto sentences = holder_sentences(d.snapshot);
  ASSERT_FALSE(sentences.empty());
  EXPECT_THAT(sentences[0], HasSubstr("the ESTABLISHED connection 127.0.0.1:"));
  EXPECT_THAT(sentences[0], HasSubstr("held open by"));
}

TEST_F(DiagnoseLive, NcclNamedServiceThreadGivesTheNcclFinding) {
  Pids p = start_self_connection_rank("NCCL Service 0");
  DiagnoseRequest request;
  request.tree_root = p.main;
  Diagnosis d;
  for (int attempt = 0; attempt < 200; ++attempt) {  // until the main thread is in futex (pthread_join) too
    d = diagnose_until(request, "nccl-descriptor-alias");
    const Finding* f = find_rule(d, "nccl-descriptor-alias");
    if (f && f->title == "NCCL descriptor-alias teardown hang") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  end_and_reap({p.helper, p.main});
  const Finding* f = find_rule(d, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr) << render_text(d.snapshot, d.findings);
  EXPECT_EQ(f->title, "NCCL descriptor-alias teardown hang");
  EXPECT_THAT(f->summary, HasSubstr("fixed in NCCL 2.18.1"));
  ASSERT_NE(d.snapshot.find(p.helper), nullptr);
  EXPECT_TRUE(d.snapshot.find(p.helper)->target) << "--tree includes the child";
}

TEST_F(DiagnoseLive, PipeReaderNamesTheGrandchildHoldingTheWriteEnd) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t reader = ::fork();
  if (reader == 0) {
    ::close(report[0]);
    int data[2];
    if (::pipe(data) != 0) ::_exit(10);
    pid_t middle = ::fork();
    if (middle == 0) {
      pid_t grandchild = ::fork();
      if (grandchild == 0) {
        ::close(data[0]);
        for (;;) ::pause();  // a double-forked daemon that kept the write end
      }
      Pids p{0, grandchild};
      if (::write(report[1], &p, sizeof p) != static_cast<ssize_t>(sizeof p)) ::_exit(11);
      ::_exit(0);
    }
    ::waitpid(middle, nullptr, 0);
    ::close(data[1]);
    ::close(report[1]);
    char byte;
    while (::read(data[0], &byte, 1) > 0) {
    }
    ::_exit(0);
  }
  ::close(report[1]);
  Pids p = read_pids(report[0]);
  DiagnoseRequest request;
  request.pids = {reader};
  Diagnosis d = diagnose_until(request, "pipe-writer-held");
  end_and_reap({p.helper, reader});

  const Finding* f = find_rule(d, "pipe-writer-held");
  ASSERT_NE(f, nullptr) << render_text(d.snapshot, d.findings);
  EXPECT_THAT(f->summary, HasSubstr("pid " + std::to_string(p.helper) + " "));
  EXPECT_THAT(f->pids, ::testing::Contains(p.helper));
}

TEST_F(DiagnoseLive, UnixPairReaderNamesTheChildHoldingThePeerEnd) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t reader = ::fork();
  if (reader == 0) {
    ::close(report[0]);
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) ::_exit(10);
    pid_t child = ::fork();
    if (child == 0) {
      for (;;) ::pause();  // keeps both ends
    }
    ::close(pair[1]);  // not the last reference: the reader never sees EOF
    Pids p{::getpid(), child};
    if (::write(report[1], &p, sizeof p) != static_cast<ssize_t>(sizeof p)) ::_exit(11);
    ::close(report[1]);
    char byte;
    while (::read(pair[0], &byte, 1) > 0) {
    }
    ::_exit(0);
  }
  ::close(report[1]);
  Pids p = read_pids(report[0]);
  DiagnoseRequest request;
  request.pids = {reader};
  Diagnosis d = diagnose_until(request, "nccl-descriptor-alias");
  end_and_reap({p.helper, reader});

  const Finding* f = find_rule(d, "nccl-descriptor-alias");
  ASSERT_NE(f, nullptr) << render_text(d.snapshot, d.findings);
  EXPECT_EQ(f->title, "descriptor-alias teardown shape");
  EXPECT_THAT(f->summary, HasSubstr("unix socket pair"));
  EXPECT_THAT(f->summary, HasSubstr("pid " + std::to_string(p.helper) + " "));
  auto sentences = holder_sentences(d.snapshot);
  ASSERT_FALSE(sentences.empty());
  EXPECT_THAT(sentences[0], HasSubstr("unix socket pair"));
  EXPECT_THAT(sentences[0], HasSubstr("a child that pid " + std::to_string(reader) + " forked at"));
}

TEST_F(DiagnoseLive, StoppedProcessIsReported) {
  pid_t child = ::fork();
  if (child == 0) {
    for (;;) ::pause();
  }
  ::kill(child, SIGSTOP);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  DiagnoseRequest request;
  request.pids = {child};
  Diagnosis d = diagnose(request);
  end_and_reap({child});
  ASSERT_EQ(d.exit_code, 0);
  const Finding* f = find_rule(d, "stopped");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->summary, HasSubstr("kill -CONT " + std::to_string(child)));
}

TEST_F(DiagnoseLive, MissingPidIsAUsageErrorNamingThePid) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a pid that surely no longer exists (until reused)
  DiagnoseRequest request;
  request.pids = {child};
  Diagnosis d = diagnose(request);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_THAT(d.error, HasSubstr(std::to_string(child)));

  DiagnoseRequest nothing;
  EXPECT_EQ(diagnose(nothing).exit_code, 2);
  DiagnoseRequest negative;
  negative.pids = {-5};
  EXPECT_EQ(diagnose(negative).exit_code, 2);
}

TEST_F(DiagnoseLive, CaptureToDirWritesEvidenceFilesAndSaysWhoHolds) {
  Pids p = start_self_connection_rank("svc-poller");
  auto dir = std::filesystem::path(HB_BINARY_DIR) / "test-output" / ("capture-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  DiagnoseRequest request;
  request.pids = {p.main};
  diagnose_until(request, "nccl-descriptor-alias");  // wait until the poller sits in poll
  CaptureOptions opts;
  opts.stacks = true;
  opts.debugger.program = "no-such-debugger-hangbench";  // the clean skip path
  CaptureResult r = capture_to_dir({p.main}, dir.string(), opts);
  end_and_reap({p.helper, p.main});

  EXPECT_THAT(r.files, ::testing::IsSupersetOf({"evidence.json", "evidence.txt"}));
  EXPECT_TRUE(std::filesystem::exists(dir / "evidence.json"));
  EXPECT_THAT(r.summary, HasSubstr("pid " + std::to_string(p.helper)));
  std::ifstream in(dir / "evidence.json");
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "hangbench.evidence/1");
  EXPECT_EQ(j["processes"][0]["pid"], p.main);
  EXPECT_THAT(j["processes"][0]["stacks"]["skipped_reason"].get<std::string>(), HasSubstr("not found"));

  // The stored evidence, judged again after the processes are gone, finds the same shape.
  auto again = find_hang_shapes(snapshot_from_json(j));
  EXPECT_TRUE(
      std::any_of(again.begin(), again.end(), [](const Finding& f) { return f.rule == "nccl-descriptor-alias"; }));
  const std::string hangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
  const std::string out = (dir / "rejudged.json").string();
  EXPECT_EQ(
      std::system((hangbench + " diagnose --from " + (dir / "evidence.json").string() + " --json > " + out).c_str()),
      0);
  std::ifstream rejudged(out);
  EXPECT_EQ(nlohmann::json::parse(rejudged)["findings"][0]["rule"], "nccl-descriptor-alias");
  std::ofstream(dir / "broken.json") << "{\"processes\": [\n";
  int rc = std::system((hangbench + " diagnose --from " + (dir / "broken.json").string() + " 2> " + out).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  std::ifstream err(out);
  std::string message((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  EXPECT_THAT(message, HasSubstr("broken.json"));
  std::filesystem::remove_all(dir);
}

// The live JSON's provenance hashes only NCCL libraries (a PyTorch process maps gigabytes
// of others: seconds of SHA-256); --timings says where the time went, on stderr.
TEST_F(DiagnoseLive, JsonProvenanceHashesOnlyNcclLibrariesAndTimingsGoToStderr) {
  auto dir = std::filesystem::path(HB_BINARY_DIR) / "test-output" / ("timings-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Two files mapped as a process maps its libraries: maps lists both by path.
  const auto torch = dir / "libtorch_cpu.so", nccl = dir / "libnccl.so.2";
  std::ofstream(torch) << std::string(4096, 't');
  std::ofstream(nccl) << std::string(4096, 'n');
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    for (const auto& file : {torch, nccl}) {
      int fd = ::open(file.c_str(), O_RDONLY);
      if (fd < 0 || ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) ::_exit(1);
    }
    (void)::write(ready[1], "r", 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const std::string hangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
  const std::string out = (dir / "d.json").string(), err = (dir / "d.err").string();
  int rc = std::system(
      (hangbench + " diagnose " + std::to_string(child) + " --json --timings > " + out + " 2> " + err).c_str());
  end_and_reap({child});
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_EQ(WEXITSTATUS(rc), 0);
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_THAT(j["processes"][0]["libraries"].dump(), HasSubstr("libtorch_cpu.so"));
  const auto& hashes = j["provenance"]["library_hashes"];
  EXPECT_EQ(hashes.size(), 1u) << hashes.dump();
  EXPECT_TRUE(hashes.contains(nccl.string())) << hashes.dump();
  std::ifstream e(err);
  std::string timings((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
  for (const char* stage : {"timings: reads", "timings: provenance", "timings: render", "timings: total"})
    EXPECT_THAT(timings, HasSubstr(stage));
  std::filesystem::remove_all(dir);
}

TEST_F(DiagnoseLive, GdbStacksOfAHungProcessAreParsedPerThread) {
  Pids p = start_self_connection_rank("svc-poller");
  DiagnoseRequest request;
  request.pids = {p.main};
  diagnose_until(request, "nccl-descriptor-alias");
  request.stacks = true;
  request.debugger.program = "gdb";  // the debugger path, on request
  request.debugger.timeout_s = 60;
  Diagnosis d = diagnose(request);
  end_and_reap({p.helper, p.main});

  const ProcessSnapshot* rank = d.snapshot.find(p.main);
  ASSERT_NE(rank, nullptr);
  ASSERT_TRUE(rank->stacks.attempted);
  ASSERT_EQ(rank->stacks.skipped_reason, "") << rank->stacks.raw;
  ASSERT_EQ(rank->stacks.threads.size(), 2u) << rank->stacks.raw;
  bool poll_frame = false, join_frame = false;
  for (const auto& t : rank->stacks.threads)
    for (const auto& fn : t.functions) {
      poll_frame |= fn.find("poll") != std::string::npos;
      join_frame |= fn.find("join") != std::string::npos;
    }
  EXPECT_TRUE(poll_frame) << rank->stacks.raw;
  EXPECT_TRUE(join_frame) << rank->stacks.raw;
}

// Without --debugger the same stacks come from libdw in-process, with modules and lines.
TEST_F(DiagnoseLive, LibdwStacksOfAHungProcessNameEveryThread) {
  Pids p = start_self_connection_rank("svc-poller");
  DiagnoseRequest request;
  request.pids = {p.main};
  diagnose_until(request, "nccl-descriptor-alias");
  request.stacks = true;
  Diagnosis d = diagnose(request);
  end_and_reap({p.helper, p.main});

  const ProcessSnapshot* rank = d.snapshot.find(p.main);
  ASSERT_NE(rank, nullptr);
  EXPECT_EQ(rank->stacks.debugger, "libdw");
  ASSERT_EQ(rank->stacks.skipped_reason, "") << rank->stacks.raw;
  ASSERT_EQ(rank->stacks.threads.size(), 2u) << rank->stacks.raw;
  bool poll_frame = false, join_frame = false, poller_named = false;
  for (const auto& t : rank->stacks.threads) {
    poller_named |= t.name == "svc-poller";
    for (const auto& f : t.frames) {
      poll_frame |= f.function.find("poll") != std::string::npos && f.module.find("libc") != std::string::npos;
      join_frame |= f.function.find("join") != std::string::npos;
    }
  }
  EXPECT_TRUE(poller_named) << rank->stacks.raw;
  EXPECT_TRUE(poll_frame) << rank->stacks.raw;
  EXPECT_TRUE(join_frame) << rank->stacks.raw;
  EXPECT_EQ(rank->python.skipped_reason.find("not a CPython process"), 0u) << rank->python.skipped_reason;
}

// The debuggers of a process tree run at once: each stand-in debugger names its
// frame after its target only once all three have started (a barrier that one
// debugger after another would never pass), so no clock is read.
TEST(DiagnoseStacks, DebuggersOfSeveralProcessesRunAtOnce) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hb_parallel_debuggers_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A stand-in debugger: marks its start, waits (bounded, only to fail) for the
  // other two, then prints one thread whose frame says whether all had started.
  const std::string marks = (dir / "started-").string();
  std::ofstream(dir / "slow-gdb") << "#!/bin/sh\nwhile [ \"$1\" != -p ]; do shift; done\npid=$2\n"
                                     "touch "
                                  << marks
                                  << "$pid\ni=0\n"
                                     "while [ $(ls "
                                  << marks
                                  << "* | wc -l) -lt 3 ] && [ $i -lt 150 ]; do "
                                     "sleep 0.1; i=$((i+1)); done\n"
                                     "name=alone_$pid; [ $(ls "
                                  << marks
                                  << "* | wc -l) -ge 3 ] && name=frame_of_$pid\n"
                                     "echo \"Thread 1 (Thread 0x1 (LWP $pid) \\\"sleeper\\\"):\"\n"
                                     "echo \"#0  0x0000000000000001 in $name ()\"\n";
  fs::permissions(dir / "slow-gdb", fs::perms::owner_all);
  std::vector<int> pids;
  for (int i = 0; i < 3; ++i) {
    pid_t child = ::fork();
    if (child == 0) {
      ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    pids.push_back(child);
  }
  SnapshotOptions opts;
  opts.stacks = true;
  opts.debugger.program = (dir / "slow-gdb").string();
  opts.debugger.timeout_s = 20;
  Snapshot s = take_snapshot(pids, opts);
  for (int pid : pids) ::kill(pid, SIGKILL);
  for (int pid : pids) ::waitpid(pid, nullptr, 0);
  fs::remove_all(dir);

  for (int pid : pids) {
    const ProcessSnapshot* p = s.find(pid);
    ASSERT_NE(p, nullptr) << pid;
    ASSERT_EQ(p->stacks.threads.size(), 1u) << p->stacks.raw;
    EXPECT_EQ(p->stacks.threads[0].functions.at(0), "frame_of_" + std::to_string(pid)) << p->stacks.raw;
  }
}
