// phases.jsonl: phases, metrics, malformed lines (warned about, never fatal).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "exec/phase_reader.hpp"

namespace hangbench::exec_detail {
namespace {

TEST(PhaseReader, PhasesMetricsAndMalformedLines) {
  auto path = std::filesystem::temp_directory_path() / ("hb_phases_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << R"({"phase":"init_done","t":10.5,"pid":5,"rank":0})"
        << "\n"
        << "{broken\n"
        << R"({"metric":"tcp_state","value":"ESTABLISHED","t":11,"pid":5,"rank":0})"
        << "\n"
        << R"({"metric":"bytes","value":1,"rank":0})"
        << "\n"
        << R"({"metric":"bytes","value":2,"rank":1})"
        << "\n"
        << "\n"
        << R"({"phase":"teardown_begin","t":12.0,"pid":5,"rank":1})"
        << "\n"
        << R"({"custom":true})"
        << "\n";
  }
  std::vector<std::string> warnings;
  PhaseLog log = read_phase_file(path.string(), [&](const std::string& w) { warnings.push_back(w); });
  std::filesystem::remove(path);
  ASSERT_EQ(log.phases.size(), 2u);
  EXPECT_EQ(log.phases[0].name, "init_done");
  EXPECT_DOUBLE_EQ(log.phases[0].t, 10.5);
  EXPECT_EQ(log.phases[1].rank, 1);
  EXPECT_EQ(log.metrics.at("tcp_state"), "ESTABLISHED");
  EXPECT_EQ(log.metrics.at("bytes"), nlohmann::json::array({1, 2}));
  EXPECT_EQ(log.metrics.at("events").size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path.string() + ":2:"), std::string::npos) << warnings[0];
}

TEST(PhaseReader, MissingFileGivesNothing) {
  PhaseLog log = read_phase_file("/nonexistent/phases.jsonl", nullptr);
  EXPECT_TRUE(log.phases.empty());
  EXPECT_TRUE(log.metrics.empty());
}

TEST(PhaseReader, LastPhaseBeforeDeadline) {
  std::vector<PhaseEvent> phases = {{"init_done", 1, 0, 0}, {"teardown_begin", 5, 0, 0}, {"late", 20, 0, 0}};
  EXPECT_EQ(last_phase_before(phases, 10), "teardown_begin");
  EXPECT_EQ(last_phase_before(phases, 0.5), "");
}

TEST(PhaseFollower, ReturnsOnlyNewCompleteLines) {
  auto path = std::filesystem::temp_directory_path() / ("hb_follow_" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(path);
  PhaseFollower follower(path.string());
  EXPECT_TRUE(follower.poll().empty());  // no file yet
  std::ofstream out(path);
  out << R"({"phase":"init_done","t":1.5})"
      << "\n"
      << R"({"metric":"x","value":1})"
      << "\n"
      << R"({"phase":"tear)";
  out.flush();
  auto first = follower.poll();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].name, "init_done");
  EXPECT_DOUBLE_EQ(first[0].t, 1.5);
  out << R"(down_begin","t":4})"
      << "\n";
  out.flush();
  auto second = follower.poll();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].name, "teardown_begin");
  EXPECT_TRUE(follower.poll().empty());
  std::filesystem::remove(path);
}

TEST(PhaseDeadline, EarliestOfTheConfiguredPhasesSeen) {
  std::vector<PhaseEvent> phases = {{"init_done", 1, 0, 0}, {"teardown_begin", 5, 0, 0}};
  std::string which;
  EXPECT_DOUBLE_EQ(phase_deadline(phases, {{"teardown_begin", 2}, {"init_done", 30}}, &which), 7);
  EXPECT_EQ(which, "teardown_begin");
  EXPECT_DOUBLE_EQ(phase_deadline(phases, {{"init_done", 3}, {"teardown_begin", 2}}, &which), 4);
  EXPECT_EQ(which, "init_done");
  EXPECT_TRUE(std::isinf(phase_deadline(phases, {{"never", 1}})));
}

}  // namespace
}  // namespace hangbench::exec_detail
