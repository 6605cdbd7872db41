// phases.jsonl: phases, metrics, malformed lines (warned about, never fatal).
#include <gtest/gtest.h>
#include <sys/stat.h>
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
  PhaseFollower follower(path.string(), 0);
  EXPECT_TRUE(follower.poll(1).empty());  // no file yet
  std::ofstream out(path);
  out << R"({"phase":"init_done","t":1.5})"
      << "\n"
      << R"({"metric":"x","value":1})"
      << "\n"
      << R"({"phase":"tear)";
  out.flush();
  auto first = follower.poll(2);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].name, "init_done");
  EXPECT_DOUBLE_EQ(first[0].t, 1.5);
  out << R"(down_begin","t":4})"
      << "\n";
  out.flush();
  auto second = follower.poll(5);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].name, "teardown_begin");
  EXPECT_TRUE(follower.poll(6).empty());
  EXPECT_EQ(follower.clamped(), 0);
  std::filesystem::remove(path);
}

// A valid JSON line nested 100,000 deep once crashed the harness (stack overflow).
TEST(PhaseReader, DeepAndLongLinesAreWarnedAboutNotParsed) {
  auto path = std::filesystem::temp_directory_path() / ("hb_deep_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << R"({"phase":"init_done","t":10})"
        << "\n";
    out << R"({"metric":"deep","value":)" << std::string(1000, '[') << std::string(1000, ']') << "}\n";
    out << R"({"metric":"long","value":")" << std::string(100000, 'x') << "\"}\n";
    out << R"({"metric":"ok","value":[[[1]]],"s":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})"
        << "\n";
  }
  std::vector<std::string> warnings;
  PhaseLog log = read_phase_file(path.string(), [&](const std::string& w) { warnings.push_back(w); });
  std::filesystem::remove(path);
  ASSERT_EQ(log.phases.size(), 1u);
  EXPECT_FALSE(log.metrics.contains("deep"));
  EXPECT_FALSE(log.metrics.contains("long"));
  EXPECT_EQ(log.metrics.at("ok"), nlohmann::json::parse("[[[1]]]"));  // brackets inside strings do not count
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":2: phase line ignored unparsed (nested deeper than 32 levels), and 1 more"),
            std::string::npos)
      << warnings[0];
  EXPECT_EQ(phase_line_out_of_bounds(std::string(kMaxPhaseLineBytes + 1, ' ')), "longer than 64 KiB (65537 bytes)");
}

// A FIFO (no writer: opening it used to block for good), a link (to /dev/zero: read
// until the harness was killed) and a folder in place of the phase file are warned
// about and not read; the follower skips them too (issue 41, item 1).
TEST(PhaseReader, AFifoALinkOrAFolderIsWarnedAboutNotRead) {
  auto dir = std::filesystem::temp_directory_path() / ("hb_phase_kinds_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto fifo = dir / "fifo.jsonl", link = dir / "link.jsonl", folder = dir / "folder.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::filesystem::create_symlink("/dev/zero", link);
  std::filesystem::create_directory(folder);
  for (const auto& path : {fifo, link, folder}) {
    std::vector<std::string> warnings;
    PhaseLog log = read_phase_file(path.string(), [&](const std::string& w) { warnings.push_back(w); });
    EXPECT_TRUE(log.phases.empty());
    ASSERT_EQ(warnings.size(), 1u) << path;
    EXPECT_NE(warnings[0].find(path.string() + ": phase file "), std::string::npos) << warnings[0];
    PhaseFollower follower(path.string(), 0);
    EXPECT_TRUE(follower.poll(1).empty());
  }
  std::filesystem::remove_all(dir);
}

// A line without a newline is held only up to its bound: 8 MiB of it costs no 8 MiB
// string, and it is named as too long with its length (getline read it all first).
TEST(PhaseReader, AnEndlessLineIsCountedNotHeld) {
  auto path = std::filesystem::temp_directory_path() / ("hb_endless_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << std::string(8 * 1024 * 1024, 'x') << "\n"
        << R"({"phase":"after","t":1})"
        << "\n";
    out << std::string(100000, 'y');  // the last line, without its newline
  }
  std::vector<std::string> warnings;
  PhaseLog log = read_phase_file(path.string(), [&](const std::string& w) { warnings.push_back(w); });
  std::filesystem::remove(path);
  ASSERT_EQ(log.phases.size(), 1u);
  EXPECT_EQ(log.phases[0].name, "after");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":1: phase line ignored unparsed (longer than 64 KiB (8388608 bytes)), and 1 more"),
            std::string::npos)
      << warnings[0];
}

// A rank with a skewed clock ("t": 0) must not set a deadline in the past.
TEST(PhaseReader, TimesAreClampedToWhenTheHarnessSawThem) {
  auto path = std::filesystem::temp_directory_path() / ("hb_skew_" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(path);
  PhaseFollower follower(path.string(), 1000);
  {
    std::ofstream out(path);
    out << R"({"phase":"teardown_begin","t":0})"
        << "\n"
        << R"({"phase":"init_done","t":1000.5})"
        << "\n";
  }
  auto seen = follower.poll(1001);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_DOUBLE_EQ(seen[0].t, 1000);  // the earliest it can have been written
  EXPECT_DOUBLE_EQ(seen[1].t, 1000.5);
  EXPECT_EQ(follower.clamped(), 1);
  std::vector<std::string> warnings;
  PhaseLog log = read_phase_file(
      path.string(), [&](const std::string& w) { warnings.push_back(w); }, 999, 1002);
  std::filesystem::remove(path);
  ASSERT_EQ(log.phases.size(), 2u);
  EXPECT_DOUBLE_EQ(log.phases[0].t, 999);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":1: phase time outside the trial's lifetime"), std::string::npos) << warnings[0];
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
