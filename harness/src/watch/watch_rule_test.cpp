// The detection rule and the watch loop with a fake clock, a scripted job, a
// fake capture and a fake control: hours of a job in microseconds.
#include <gtest/gtest.h>

#include <functional>

#include "hangbench/watch.hpp"

namespace hangbench::watch {
namespace {

// A clock that jumps: sleep_until moves it.
class FakeClock : public Clock {
 public:
  double now() override { return t; }
  void sleep_until(double until) override { t = std::max(t, until); }
  double unix_now() override { return 1.7e9 + t; }
  double t = 0;
};

// A job whose samples a function of time gives.
class ScriptedJob : public JobReader {
 public:
  explicit ScriptedJob(std::function<Sample(double)> f) : f_(std::move(f)) {}
  Sample read(double now) override {
    Sample s = f_(now);
    s.t = now;
    return s;
  }
  std::vector<int> pids() override { return {100, 101}; }
  int root_pid() override { return 100; }

 private:
  std::function<Sample(double)> f_;
};

class FakeCapture : public Capture {
 public:
  HangEvidence capture(const std::vector<int>& pids, const nlohmann::json& facts) override {
    ++calls;
    last_facts = facts;
    HangEvidence e;
    e.shape = "pipe-writer-held";
    e.catalog_id = "";
    e.pids = pids;
    e.ranks = {0, 1};
    return e;
  }
  int calls = 0;
  nlohmann::json last_facts;
};

class FakeControl : public JobControl {
 public:
  void end_tree() override { ++ended; }
  void signal_launcher(int sig) override { signals.push_back(sig); }
  std::optional<int> wait_status() override { return std::nullopt; }
  int ended = 0;
  std::vector<int> signals;
};

// Steps the watcher until it flags a hang, the job ends, or the clock passes limit_s.
void step_until_hung(Watcher& w, const FakeClock& clock, double limit_s) {
  while (w.step() && !w.outcome().hung && clock.t < limit_s) {
  }
}

// Phase lines every `every` seconds until `hang_at` (then none), the job alive until `end`.
std::function<Sample(double)> phases_every(double every, double hang_at, double end) {
  return [=](double t) {
    Sample s;
    s.alive = t < end;
    s.phase_lines = static_cast<long long>(std::min(t, hang_at) / every);
    s.output_bytes = 0;
    return s;
  };
}

WatchOptions options(double idle) {
  WatchOptions o;
  o.idle_s = idle;
  o.events_path = "/dev/null";
  o.job = "train";
  return o;
}

TEST(WatchSignals, ParsesAutoAndLists) {
  EXPECT_TRUE(parse_signals("auto").automatic);
  auto s = parse_signals("phase,cpu");
  EXPECT_FALSE(s.automatic);
  EXPECT_TRUE(s.phase);
  EXPECT_TRUE(s.cpu);
  EXPECT_FALSE(s.output);
  EXPECT_EQ(to_string(s), "phase,cpu");
  EXPECT_TRUE(parse_signals("fr").fr);
  EXPECT_THROW(parse_signals("phase,collectives"), std::invalid_argument);
}

TEST(WatchSignals, ReadsCpuSecondsFromStat) {
  const std::string line =
      "42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 12345 1000 100 18446744073709551615";
  auto cpu = parse_cpu_seconds(line, 100);
  ASSERT_TRUE(cpu);
  EXPECT_DOUBLE_EQ(*cpu, 3.0);
  EXPECT_FALSE(parse_cpu_seconds("garbage", 100));
}

// The rule: a job that progresses every 20 s under --idle 30 for 3 minutes is never flagged.
TEST(WatchLoop, ProgressEvery20sUnderIdle30IsNeverFlagged) {
  FakeClock clock;
  ScriptedJob job(phases_every(20, 1e9, 180));
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(30), clock, job, capture, control);
  auto outcome = w.run();
  EXPECT_FALSE(outcome.hung);
  EXPECT_EQ(capture.calls, 0);
  EXPECT_GE(clock.t, 180);
}

TEST(WatchLoop, AStallIsFlaggedWithinIdlePlusOnePoll) {
  FakeClock clock;
  ScriptedJob job(phases_every(5, 60, 1000));  // the last phase line at t = 60
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(30), clock, job, capture, control);
  double flagged_at = -1;
  while (w.step() && clock.t < 500) {
    if (w.outcome().hung && flagged_at < 0) flagged_at = clock.t;
  }
  ASSERT_GE(flagged_at, 0);
  EXPECT_GE(flagged_at, 60 + 30);
  EXPECT_LE(flagged_at, 60 + 30 + 1 + 1e-9);
  EXPECT_EQ(capture.calls, 1) << "one hang, one capture";
  ASSERT_EQ(w.outcome().events.size(), 1u);
  const auto& e = w.outcome().events.front();
  EXPECT_EQ(e["event"], "hang");
  EXPECT_EQ(e["shape"], "pipe-writer-held");
  EXPECT_EQ(e["job"], "train");
  EXPECT_EQ(e["ranks"], nlohmann::json::array({0, 1}));
  EXPECT_GE(e["seconds_since_progress"].get<double>(), 30);
  EXPECT_EQ(control.ended, 0) << "no action asked for";
}

// A rank spinning (an NCCL proxy busy-polling) is not progress once the job speaks phases.
TEST(WatchLoop, AutoIgnoresCpuOnceThePhaseProtocolIsSpoken) {
  FakeClock clock;
  ScriptedJob job([](double t) {
    Sample s;
    s.phase_lines = t < 10 ? 1 + static_cast<long long>(t) : 11;
    s.cpu_s[7] = t;  // one full core, always
    s.ranks[7] = 0;
    return s;
  });
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(30), clock, job, capture, control);
  step_until_hung(w, clock, 200);
  EXPECT_TRUE(w.outcome().hung);
  EXPECT_LE(clock.t, 10 + 30 + 1 + 1e-9);
}

// The Flight Recorder's last completed collective advancing is progress; once it
// stops (a rank inside a hung collective), the stall is flagged even though a
// rank spins.
TEST(WatchLoop, AutoReadsTheFlightRecordersCompletedCollectives) {
  FakeClock clock;
  ScriptedJob job([](double t) {
    Sample s;
    s.fr_completed[7] = static_cast<long long>(std::min(t, 50.0) / 5);  // a collective every 5 s until t = 50
    s.fr_completed[8] = 3;                                              // another rank stuck from the start
    s.cpu_s[7] = t;
    s.ranks[7] = 0;
    return s;
  });
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(30), clock, job, capture, control);
  step_until_hung(w, clock, 500);
  EXPECT_TRUE(w.outcome().hung);
  EXPECT_GE(clock.t, 50 + 30);
  EXPECT_LE(clock.t, 50 + 30 + 1 + 1e-9);
  EXPECT_EQ(w.tracker().rule_signals(), (std::vector<std::string>{"fr", "output"}));
}

// A rank with the Flight Recorder on that never answers (it holds the GIL in a native
// call: PyTorch takes a dump's Python frames under the GIL) while its collective spins
// on the CPU and the GPU: the busy counters must not hide it (seen on the H200 with the
// corpus's GIL convoy, never flagged in 190 s before this rule).
TEST(WatchLoop, AutoFlagsARankWhoseFlightRecorderNeverAnswersWhileItSpins) {
  FakeClock clock;
  ScriptedJob job([](double t) {
    Sample s;
    s.fr_configured = 2;  // both ranks have it on; neither answers
    s.output_bytes = t < 5 ? static_cast<long long>(100 * t) : 500;
    s.cpu_s[7] = t;  // the proxy thread spins
    s.gpu_busy = true;
    s.ranks[7] = 0;
    return s;
  });
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(30), clock, job, capture, control);
  step_until_hung(w, clock, 500);
  EXPECT_TRUE(w.outcome().hung);
  EXPECT_LE(clock.t, 5 + 30 + 1 + 1e-9);
  EXPECT_EQ(w.tracker().rule_signals(), (std::vector<std::string>{"fr", "output"}));
}

// Without the Flight Recorder and before any phase line, a busy job is progressing.
TEST(WatchLoop, AutoCountsCpuAndGpuWhenNoRankRecordsItsCollectives) {
  FakeClock clock;
  ScriptedJob job([](double t) {
    Sample s;
    s.output_bytes = 500;
    s.cpu_s[7] = t;
    s.gpu_busy = true;
    s.ranks[7] = 0;
    s.alive = t < 200;
    return s;
  });
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(30), clock, job, capture, control);
  EXPECT_FALSE(w.run().hung);
  EXPECT_EQ(w.tracker().rule_signals(), (std::vector<std::string>{"output", "cpu", "gpu"}));
}

TEST(WatchLoop, CpuSignalCountsABusyRankAndNotASleepingOne) {
  for (double share : {0.5, 0.0}) {
    FakeClock clock;
    ScriptedJob job([share](double t) {
      Sample s;
      s.cpu_s[7] = share * t;
      s.ranks[7] = 0;
      s.alive = t < 100;
      return s;
    });
    FakeCapture capture;
    FakeControl control;
    auto o = options(30);
    o.signals = parse_signals("cpu");
    Watcher w(o, clock, job, capture, control);
    auto outcome = w.run();
    EXPECT_EQ(outcome.hung, share == 0.0) << "CPU share " << share;
  }
}

// --signals gpu: ranks that import for 20 s on a CPU (no GPU use yet) are starting, not
// hung; once they used the GPU, 30 s without it is a hang whatever the CPU does.
TEST(WatchLoop, GpuSignalJudgesFromTheJobsFirstGpuUse) {
  for (double first_gpu_use : {20.0, 1e9}) {
    FakeClock clock;
    ScriptedJob job([first_gpu_use](double t) {
      Sample s;
      s.cpu_s[7] = 0.9 * t;  // busy on a CPU throughout
      s.gpu_busy = t >= first_gpu_use && t < 60;
      s.ranks[7] = 0;
      s.alive = t < 300;
      return s;
    });
    FakeCapture capture;
    FakeControl control;
    auto o = options(30);
    o.signals = parse_signals("gpu");
    Watcher w(o, clock, job, capture, control);
    step_until_hung(w, clock, 300);
    if (first_gpu_use < 100) {
      ASSERT_TRUE(w.outcome().hung);
      EXPECT_GE(clock.t, 90.0);  // 60 s (the last GPU use) + 30 s idle, not 30 s after the start
      EXPECT_EQ(w.tracker().rule_signals(), (std::vector<std::string>{"gpu"}));
    } else {
      EXPECT_FALSE(w.outcome().hung) << "a job that never used the GPU but keeps a CPU busy is still starting";
    }
  }
}

TEST(WatchLoop, KillAfterEndsTheTreeAndStops) {
  FakeClock clock;
  ScriptedJob job(phases_every(1, 5, 1e9));
  FakeCapture capture;
  FakeControl control;
  auto o = options(10);
  o.on_hang = OnHang::Kill;
  o.kill_after_s = 7;
  Watcher w(o, clock, job, capture, control);
  auto outcome = w.run();
  EXPECT_TRUE(outcome.hung);
  EXPECT_TRUE(outcome.ended_by_watch);
  EXPECT_EQ(control.ended, 1);
  EXPECT_GE(clock.t, 5 + 10 + 7);
  EXPECT_LE(clock.t, 5 + 10 + 7 + 1 + 1e-9);
}

TEST(WatchLoop, SignalGoesToTheLauncher) {
  FakeClock clock;
  ScriptedJob job(phases_every(1, 5, 40));
  FakeCapture capture;
  FakeControl control;
  auto o = options(10);
  o.on_hang = OnHang::Signal;
  o.signal = 10;
  Watcher w(o, clock, job, capture, control);
  w.run();
  EXPECT_EQ(control.signals, std::vector<int>{10});
}

TEST(WatchLoop, ProgressAfterAHangClosesItAndALaterStallIsFlaggedAgain) {
  FakeClock clock;
  // Phases until 10, nothing until 50, phases until 60, then nothing.
  ScriptedJob job([](double t) {
    Sample s;
    long long n = static_cast<long long>(std::min(t, 10.0));
    if (t >= 50) n += static_cast<long long>(std::min(t, 60.0) - 49);
    s.phase_lines = n;
    s.alive = t < 200;
    return s;
  });
  FakeCapture capture;
  FakeControl control;
  Watcher w(options(20), clock, job, capture, control);
  auto outcome = w.run();
  EXPECT_EQ(capture.calls, 2);
  ASSERT_EQ(outcome.events.size(), 3u);
  EXPECT_EQ(outcome.events[0]["event"], "hang");
  EXPECT_EQ(outcome.events[1]["event"], "progress");
  EXPECT_EQ(outcome.events[2]["event"], "hang");
}

TEST(WatchPrometheus, NamesTheJobShapeCatalogAndRanks) {
  HangEvidence e;
  e.shape = "nccl-descriptor-alias";
  e.catalog_id = "nccl-2.17-teardown";
  e.ranks = {1, 3};
  const std::string text = prometheus_text("train \"a\"", &e, 312.0);
  EXPECT_NE(text.find("hangbench_hang{job=\"train \\\"a\\\"\",shape=\"nccl-descriptor-alias\","
                      "catalog_id=\"nccl-2.17-teardown\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hangbench_seconds_since_progress{job=\"train \\\"a\\\"\"} 312.0"), std::string::npos) << text;
  EXPECT_NE(text.find("hangbench_hang_rank{job=\"train \\\"a\\\"\",rank=\"3\"} 1"), std::string::npos) << text;
  EXPECT_NE(prometheus_text("train", nullptr, 0).find("} 0\n"), std::string::npos);
}

TEST(WatchSlurm, NodeSamplesRoundTripAndMergeWithEachNodesPidsApart) {
  Sample a;
  a.phase_lines = 3;
  a.output_bytes = 10;
  a.cpu_s[42] = 1.5;
  a.ranks[42] = 0;
  a.gpu_busy = false;
  a.last_phase = "step";
  const std::string line = encode_sample("node1", a);
  EXPECT_EQ(line.back(), '\n');
  std::string host;
  Sample back;
  ASSERT_TRUE(decode_sample("0: " + line.substr(0, line.size() - 1), host, back));  // srun --label's prefix too
  EXPECT_EQ(host, "node1");
  EXPECT_EQ(back.phase_lines, 3);
  EXPECT_EQ(back.cpu_s.at(42), 1.5);
  EXPECT_EQ(back.ranks.at(42), 0);
  EXPECT_EQ(back.gpu_busy, std::optional<bool>(false));
  EXPECT_FALSE(decode_sample("srun: error: something", host, back));

  Sample b;
  b.phase_lines = -1;
  b.output_bytes = 5;
  b.cpu_s[42] = 2.0;  // the same pid on another node
  b.ranks[42] = 1;
  const Sample m = merge_node_samples({{"node1", a}, {"node2", b}}, 7);
  EXPECT_EQ(m.t, 7);
  EXPECT_EQ(m.phase_lines, 3);
  EXPECT_EQ(m.output_bytes, 15);
  EXPECT_EQ(m.cpu_s.size(), 2u);
  EXPECT_EQ(m.ranks.size(), 2u);
}

}  // namespace
}  // namespace hangbench::watch

namespace hangbench::watch {
namespace {

// Each Flight Recorder request makes ProcessGroupNCCL log to stderr (PyTorch 2.11, seen
// on the H100): those lines are watch's own doing and must not count as progress.
TEST(WatchOutput, PyTorchsDumpLogLinesAreNotProgressAndOtherLinesAre) {
  OutputProgress p;
  const std::string dump =
      "[rank0]:[E1206 02:51:42.632109959 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
      "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0\n";
  EXPECT_EQ(p.add(dump), 0u);
  EXPECT_EQ(p.add("epoch 3 loss 0.25\n"), 18u);
  // A line split over two reads counts once, when it ends; a dump line split the same way never.
  EXPECT_EQ(p.add("step 1"), 0u);
  EXPECT_EQ(p.add("0 done\n"), 13u);
  EXPECT_EQ(p.add(dump.substr(0, 40)), 0u);
  EXPECT_EQ(p.add(dump.substr(40)), 0u);
  // A progress bar redrawn with carriage returns counts at each redraw.
  EXPECT_EQ(p.add("50%\r"), 4u);
  // A line without an end counts once it is long.
  EXPECT_EQ(p.add(std::string(5000, 'x')), 4096u);
  EXPECT_FALSE(is_flight_recorder_dump_log("the dump debug info of my own program\n"));
  EXPECT_TRUE(is_flight_recorder_dump_log("[I] ProcessGroupNCCL dumping nccl trace to /tmp/x\n"));
}

}  // namespace
}  // namespace hangbench::watch
