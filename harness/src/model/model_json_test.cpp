// The model's JSON forms: the harness's typed facts are written as the "harness.*"
// metrics they have always been, and read back from them, rows of older stores too.
#include <gtest/gtest.h>

#include "hangbench/model.hpp"

namespace hangbench {
namespace {

TrialResult trial_with_facts() {
  TrialResult t;
  t.cell_id = "x=1";
  t.outcome = Outcome::Hang;
  t.metrics = {{"steps", 3}, {"infra_error", "no GPU"}};
  t.harness.cleanup = CleanupStep::Kill;
  t.harness.leftover_pids = {41, 57};
  t.harness.pid_namespace = true;
  t.harness.unmapped_namespace_pids = {9};
  t.harness.hang_deadline = HangDeadline{"teardown_begin", 2, "learned from 6 healthy teardowns + a margin"};
  t.harness.cgroup = true;
  return t;
}

TEST(ModelJson, HarnessFactsAreWrittenAsTheirMetrics) {
  const nlohmann::json j = trial_with_facts();
  const std::string expected =
      R"x({"harness.cgroup":true,"harness.cleanup":"SIGKILL","harness.hang_deadline":"teardown_begin + 2 s )x"
      R"x((learned from 6 healthy teardowns + a margin)","harness.leftover_pids":[41,57],)x"
      R"x("harness.pid_namespace":true,"harness.unmapped_namespace_pids":[9],"infra_error":"no GPU","steps":3})x";
  EXPECT_EQ(j.at("metrics").dump(), expected);
  // The reports' ordered form has the same keys in the same order.
  const nlohmann::ordered_json ordered = trial_with_facts();
  EXPECT_EQ(ordered.at("metrics").dump(), j.at("metrics").dump());
}

TEST(ModelJson, UnsetFactsWriteNothing) {
  TrialResult t;
  t.metrics = {{"steps", 3}};
  EXPECT_EQ(nlohmann::json(t).at("metrics").dump(), R"({"steps":3})");
  t.harness.cleanup = CleanupStep::None;
  t.harness.hang_deadline = HangDeadline{"init_done", 0.5, ""};
  EXPECT_EQ(nlohmann::json(t).at("metrics").dump(),
            R"({"harness.cleanup":"none","harness.hang_deadline":"init_done + 0.5 s","steps":3})");
}

TEST(ModelJson, HarnessMetricsReadBackAsFactsAndWriteTheSame) {
  const nlohmann::json written = trial_with_facts();
  const TrialResult t = written.get<TrialResult>();
  EXPECT_EQ(t.metrics, (nlohmann::json{{"steps", 3}, {"infra_error", "no GPU"}}));
  EXPECT_EQ(t.harness.cleanup, CleanupStep::Kill);
  EXPECT_EQ(t.harness.leftover_pids, (std::vector<int>{41, 57}));
  EXPECT_TRUE(t.harness.pid_namespace);
  EXPECT_EQ(t.harness.unmapped_namespace_pids, std::vector<int>{9});
  ASSERT_TRUE(t.harness.hang_deadline.has_value());
  EXPECT_EQ(t.harness.hang_deadline->phase, "teardown_begin");
  EXPECT_DOUBLE_EQ(t.harness.hang_deadline->seconds, 2);
  EXPECT_EQ(t.harness.hang_deadline->learned, "learned from 6 healthy teardowns + a margin");
  EXPECT_TRUE(t.harness.cgroup);
  EXPECT_EQ(nlohmann::json(t).dump(), written.dump());
}

// Deadlines as the executor wrote them into stores before the facts were typed.
TEST(ModelJson, StoredDeadlinesReadBackExactly) {
  for (const char* text :
       {"init_done + 8 s", "teardown_begin + 0.333333 s", "init_done + 1e-05 s",
        "teardown_begin + 2 s (learned from the fixed reference's 6 healthy teardowns in this run)"}) {
    const nlohmann::json stored = {{"metrics", {{"harness.hang_deadline", text}}}};
    const TrialResult t = stored.get<TrialResult>();
    EXPECT_TRUE(t.harness.hang_deadline.has_value()) << text;
    EXPECT_TRUE(t.metrics.empty()) << text;
    EXPECT_EQ(nlohmann::json(t).at("metrics"), stored.at("metrics")) << text;
  }
}

// A "harness.*" metric that the facts would not write back as it stands (a value
// of another kind, a key of a later harness) stays a metric, as it was.
TEST(ModelJson, UnreadableHarnessMetricsStayMetrics) {
  const nlohmann::json metrics = {{"harness.cleanup", "SIGHUP"},
                                  {"harness.pid_namespace", false},
                                  {"harness.leftover_pids", nlohmann::json::array()},
                                  {"harness.unmapped_namespace_pids", nlohmann::json::array({1.5})},
                                  {"harness.hang_deadline", "soon"},
                                  {"harness.cgroup", 1},
                                  {"harness.something_new", 7}};
  const TrialResult t = nlohmann::json{{"metrics", metrics}}.get<TrialResult>();
  EXPECT_EQ(t.metrics, metrics);
  EXPECT_FALSE(t.harness.cleanup.has_value());
  EXPECT_FALSE(t.harness.hang_deadline.has_value());
  EXPECT_EQ(nlohmann::json(t).at("metrics"), metrics);
}

TEST(ModelJson, WorkloadInfraErrorIsTheWorkloadsOwnMetric) {
  TrialResult t;
  EXPECT_EQ(workload_infra_error(t), "");
  t.metrics["infra_error"] = "ncclCommInitRank: unhandled cuda error";
  EXPECT_EQ(workload_infra_error(t), "ncclCommInitRank: unhandled cuda error");
  t.metrics["infra_error"] = {"first", "second"};  // written twice
  EXPECT_EQ(workload_infra_error(t), "first");
  t.metrics["infra_error"] = 3;
  EXPECT_EQ(workload_infra_error(t), "");
  t.infra_error = "the harness's own";
  t.metrics.erase("infra_error");
  EXPECT_EQ(workload_infra_error(t), "");
}

TEST(ModelJson, ProvenanceReadsEveryFieldAndKeepsDefaultsForMissingOnes) {
  Provenance p;
  p.hangbench_version = "0.9";
  p.argv = {"hangbench", "run"};
  p.host = "h";
  p.library_hashes = {{"/lib/libnccl.so.2", "ab"}};
  p.environment = {{"NCCL_DEBUG", "INFO"}};
  p.trial_isolation = "pid-namespace";
  p.shard_commands = {"hangbench run --shard 0/2"};
  const nlohmann::json j = p;
  EXPECT_EQ(nlohmann::json(j.get<Provenance>()), j);
  nlohmann::json partial = {{"host", "h"}, {"gpu", nullptr}};
  const Provenance read = partial.get<Provenance>();
  EXPECT_EQ(read.host, "h");
  EXPECT_EQ(read.gpu, "");
  EXPECT_TRUE(read.trial_isolation.empty());
}

}  // namespace
}  // namespace hangbench
