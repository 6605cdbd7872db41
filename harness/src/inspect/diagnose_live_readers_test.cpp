// The pure parts of diagnose's live readers: PEP 626 location tables, the line
// tables of 3.9 and 3.10, merging Python frames into native ones, system call
// names per architecture, the Flight Recorder's pickle and its summary, and
// collecting a dump through a pipe.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "hangbench/flight_recorder.hpp"
#include "hangbench/proc.hpp"
#include "hangbench/python_stacks.hpp"
#include "inspect/pickle_reader.hpp"

using namespace hangbench::diagnose;
namespace fs = std::filesystem;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(HB_FIXTURES_DIR) + "/flight_recorder/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

StackFrame native(const std::string& function) {
  StackFrame f;
  f.function = function;
  f.pc = 0x1000;
  return f;
}

std::vector<std::string> names(const std::vector<StackFrame>& frames) {
  std::vector<std::string> out;
  for (const auto& f : frames) out.push_back(f.function);
  return out;
}

}  // namespace

// One entry of each form: short (same line), one-line (+1), no-column (+3), long (-2), no location.
TEST(LocationTable, EachEntryFormMovesTheLineAsCPythonWritesIt) {
  std::string table = bytes({0x80, 0x00,                    // code 0, 1 unit: line 10
                             0xD9, 0x00, 0x00,              // code 11, 2 units: line 11
                             0xE8, 0x06,                    // code 13, 1 unit, delta +3: line 14
                             0xF0, 0x05, 0x00, 0x01, 0x02,  // code 14, 1 unit, delta -2: line 12
                             0xF8});                        // code 15, 1 unit: no line
  EXPECT_EQ(line_from_location_table(table, 10, 0), 10);
  EXPECT_EQ(line_from_location_table(table, 10, 1), 11);
  EXPECT_EQ(line_from_location_table(table, 10, 2), 11);
  EXPECT_EQ(line_from_location_table(table, 10, 3), 14);
  EXPECT_EQ(line_from_location_table(table, 10, 4), 12);
  EXPECT_EQ(line_from_location_table(table, 10, 5), std::nullopt);
  EXPECT_EQ(line_from_location_table(table, 10, 6), std::nullopt) << "past the table";
  EXPECT_EQ(line_from_location_table(bytes({0x00, 0x01}), 10, 0), std::nullopt) << "not a location table";
}

// The tables of one function (a loop, a two-line condition, a two-line return: line
// deltas back and forth) as CPython 3.9.2 and 3.10.4 wrote them, with the line of each
// instruction as each answered (dis.findlinestarts, co_lines).
const std::vector<int> kSampleLines = {3, 3, 4, 4, 4, 4, 5, 6,  5,  5,  7,  7,  7,
                                       7, 7, 9, 9, 9, 9, 9, 10, 11, 11, 11, 10, 10};

TEST(LineNumberTable, Python39LnotabGivesEachInstructionsLine) {
  std::string lnotab = bytes({0, 1, 4, 1, 8, 1, 2, 1, 2, 255, 4, 2, 10, 2, 10, 1, 2, 1, 6, 255});
  for (int i = 0; i < static_cast<int>(kSampleLines.size()); ++i)
    EXPECT_EQ(line_from_lnotab(lnotab, 2, i * 2), kSampleLines[i]) << "byte offset " << i * 2;
  EXPECT_EQ(line_from_lnotab("", 2, 0), 2) << "no table: the first line";
}

TEST(LineNumberTable, Python310LinetableGivesEachInstructionsLine) {
  std::string linetable = bytes({4, 1, 8, 1, 2, 1, 2, 1, 4, 255, 10, 2, 10, 2, 2, 1, 6, 1, 4, 255});
  for (int i = 0; i < static_cast<int>(kSampleLines.size()); ++i)
    EXPECT_EQ(line_from_linetable_3_10(linetable, 2, i * 2), kSampleLines[i]) << "byte offset " << i * 2;
  EXPECT_EQ(line_from_linetable_3_10(bytes({2, 1, 2, 0x80}), 2, 2), std::nullopt) << "-128: no line";
  EXPECT_EQ(line_from_linetable_3_10(linetable, 2, 52), std::nullopt) << "past the table";
}

TEST(MergePythonFrames, EachEvaluatorGetsItsOwnPythonFrames) {
  PythonThread t;
  t.frames = {{"inner", "a.py", 3, false}, {"middle", "a.py", 7, true}, {"outer", "b.py", 9, true}};
  auto merged = merge_python_frames({native("recv"), native("_PyEval_EvalFrameDefault"), native("PyObject_Call"),
                                     native("_PyEval_EvalFrameDefault"), native("main")},
                                    t);
  EXPECT_THAT(names(merged), ::testing::ElementsAre("recv", "inner", "middle", "PyObject_Call", "outer", "main"));
  EXPECT_TRUE(merged[1].python);
  EXPECT_EQ(merged[1].file, "a.py");
  EXPECT_EQ(merged[1].line, 3);
  EXPECT_FALSE(merged[3].python);
}

TEST(MergePythonFrames, FramesLeftOverGoAfterTheOutermostEvaluator) {
  PythonThread t;
  t.frames = {{"inner", "a.py", 3, true}, {"outer", "b.py", 9, true}};
  auto merged = merge_python_frames({native("recv"), native("_PyEval_EvalFrameDefault"), native("main")}, t);
  EXPECT_THAT(names(merged), ::testing::ElementsAre("recv", "inner", "outer", "main"));
  EXPECT_THAT(names(merge_python_frames({}, t)), ::testing::ElementsAre("inner", "outer"));
}

// The rules read names, not numbers: aarch64 (GH200) numbers its calls differently.
TEST(SyscallNames, ComeFromTheArchitecturesOwnTable) {
  EXPECT_EQ(hangbench::proc::syscall_name(7, "x86_64"), "poll");
  EXPECT_EQ(hangbench::proc::syscall_name(202, "x86_64"), "futex");
  EXPECT_EQ(hangbench::proc::syscall_name(98, "aarch64"), "futex");
  EXPECT_EQ(hangbench::proc::syscall_name(73, "aarch64"), "ppoll");
  EXPECT_EQ(hangbench::proc::syscall_name(207, "aarch64"), "recvfrom");
  EXPECT_EQ(hangbench::proc::syscall_name(99999, "aarch64"), "syscall_99999");
  EXPECT_EQ(hangbench::proc::syscall_name(7, "no-such-arch"), "syscall_7");
}

TEST(FlightRecorderPickle, BothProtocolsReadToTheSameJson) {
  auto two = unpickle_plain(read_fixture("protocol2_rank_0"));
  auto four = unpickle_plain(read_fixture("protocol4_rank_0"));
  EXPECT_EQ(two, four);
  ASSERT_EQ(two["entries"].size(), 3u);
  EXPECT_EQ(two["version"], "2.10");
  EXPECT_EQ(two["entries"][0]["profiling_name"], "nccl:all_reduce");
  EXPECT_EQ(two["entries"][0]["time_created_ns"], 1733190000000000000LL);
  EXPECT_EQ(two["entries"][0]["process_group"], nlohmann::json::array({"0", "default_pg"}));
  EXPECT_EQ(two["entries"][0]["duration_ms"], 0.25);
  EXPECT_EQ(two["entries"][1]["retired"], false);
  EXPECT_TRUE(two["entries"][2]["time_discovered_started_ns"].is_null());
}

TEST(FlightRecorderPickle, TruncatedOrForeignBytesSaySo) {
  std::string dump = read_fixture("protocol2_rank_0");
  ASSERT_GT(dump.size(), 100u);
  EXPECT_THROW(unpickle_plain(dump.substr(0, dump.size() / 2)), std::invalid_argument);
  EXPECT_THROW(unpickle_plain("\x80\x02\xff"), std::invalid_argument);
  EXPECT_THROW(unpickle_plain(""), std::invalid_argument);
}

TEST(FlightRecorderSummary, LastEnqueuedStartedAndCompleted) {
  auto summary = summarize_flight_recorder(unpickle_plain(read_fixture("protocol4_rank_0")));
  EXPECT_EQ(summary["entries"], 3);
  EXPECT_EQ(summary["last_enqueued"]["collective_seq_id"], 3);
  EXPECT_EQ(summary["last_enqueued"]["state"], "scheduled");
  EXPECT_EQ(summary["last_started"]["collective_seq_id"], 2);
  EXPECT_EQ(summary["last_completed"]["collective_seq_id"], 1);
  EXPECT_EQ(summary["last_completed"]["op"], "nccl:all_reduce");
  EXPECT_EQ(summary["last_completed"]["input_sizes"], nlohmann::json::parse("[[16, 16]]"));
  auto empty = summarize_flight_recorder(nlohmann::json::object());
  EXPECT_EQ(empty["entries"], 0);
  EXPECT_TRUE(empty["last_started"].is_null());
}

TEST(FlightRecorderSettings, ComeFromTheEnvironment) {
  auto s = flight_recorder_settings(
      {{"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"}, {"TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "/x/pipe_"}});
  EXPECT_EQ(s.buffer_size, 2000);
  EXPECT_EQ(s.pipe_prefix, "/x/pipe_");
  EXPECT_EQ(s.dump_prefixes, (std::vector<std::string>{"/tmp/.cache/torch/comm_lib_trace_rank_",
                                                       "/tmp/.cache/torch/nccl_trace_rank_", "/tmp/nccl_trace_rank_"}))
      << "PyTorch's defaults, newest first, under HOME (/tmp without one)";
  EXPECT_EQ(flight_recorder_settings({{"HOME", "/home/u"}}).dump_prefixes.front(),
            "/home/u/.cache/torch/comm_lib_trace_rank_");
  EXPECT_EQ(flight_recorder_settings({}).buffer_size, -1) << "unset";
  EXPECT_EQ(flight_recorder_settings({{"TORCH_FR_BUFFER_SIZE", "-5"}}).buffer_size, 0);
  EXPECT_EQ(s.rank, -1) << "no RANK";
  // PyTorch 2.11's names come first; RANK picks the rank's own files.
  auto now = flight_recorder_settings({{"TORCH_FR_BUFFER_SIZE", "64"},
                                       {"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"},
                                       {"TORCH_FR_DUMP_TEMP_FILE", "/x/fr_"},
                                       {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "/x/old_"},
                                       {"RANK", "3"}});
  EXPECT_EQ(now.buffer_size, 64);
  EXPECT_EQ(now.dump_prefixes, std::vector<std::string>{"/x/fr_"});
  EXPECT_EQ(now.dump_places(), "/x/fr_<rank>");
  EXPECT_EQ(now.rank, 3);
  EXPECT_EQ(flight_recorder_settings({{"RANK", "1x"}}).rank, -1);
}

// PyTorch 2.11 records 2000 entries unless told otherwise: a dump pipe alone asks for dumps,
// and 0 turns the recorder off whatever else is set.
TEST(FlightRecorderSettings, AnUnsetBufferWithAPipeIsAskedAndAZeroOneIsNot) {
  EXPECT_TRUE(flight_recorder_settings({{"TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "/x/pipe_"}}).askable());
  EXPECT_FALSE(flight_recorder_settings({}).askable()) << "nothing set: the job did not ask for the recorder";
  EXPECT_FALSE(
      flight_recorder_settings({{"TORCH_FR_BUFFER_SIZE", "0"}, {"TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "/x/pipe_"}})
          .askable());
  EXPECT_TRUE(flight_recorder_settings({{"TORCH_NCCL_TRACE_BUFFER_SIZE", "10"}}).askable());
  auto off = collect_flight_recorder(flight_recorder_settings({{"TORCH_FR_BUFFER_SIZE", "0"}}), 1.0);
  EXPECT_THAT(off.skipped_reason, ::testing::HasSubstr("is 0"));
  auto unset = collect_flight_recorder(flight_recorder_settings({}), 1.0);
  EXPECT_THAT(unset.skipped_reason, ::testing::HasSubstr("not set up"));
}

TEST(FlightRecorderSettings, TheWaitIsTwoLooksOfTheMonitorAndASmallShareOfTheBudget) {
  const auto by_default = flight_recorder_settings({});
  EXPECT_DOUBLE_EQ(by_default.poll_interval_s, 1.0);
  EXPECT_DOUBLE_EQ(flight_recorder_wait_bound(by_default, 20), 2.5);  // diagnose's default budget
  EXPECT_DOUBLE_EQ(flight_recorder_wait_bound(by_default, 4), 1.0);   // a quarter of a short budget
  const auto fast = flight_recorder_settings({{"TORCH_NCCL_COORD_CHECK_MILSEC", "100"}});
  EXPECT_DOUBLE_EQ(fast.poll_interval_s, 0.1);
  EXPECT_DOUBLE_EQ(flight_recorder_wait_bound(fast, 20), 0.7);
  EXPECT_DOUBLE_EQ(flight_recorder_settings({{"TORCH_NCCL_COORD_CHECK_MILSEC", "soon"}}).poll_interval_s, 1.0);
}

TEST(FlightRecorderSettings, AGivenWaitIsKeptUpToTheWholeBudget) {
  const auto by_default = flight_recorder_settings({});
  EXPECT_DOUBLE_EQ(flight_recorder_wait_bound(by_default, 20, 15), 15.0);  // `--fr-wait 15`: past a quarter
  EXPECT_DOUBLE_EQ(flight_recorder_wait_bound(by_default, 20, 40), 20.0);  // never past --timeout
  EXPECT_DOUBLE_EQ(flight_recorder_wait_bound(by_default, 20, 0), 0.0);    // 0: an earlier dump only
}

class FlightRecorderCollect : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("hb_fr_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    settings.buffer_size = 2000;
    settings.dump_prefixes = {(dir / "nccl_trace_rank_").string()};
    settings.pipe_prefix = (dir / "nccl_pipe_rank_").string();
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
  FlightRecorderSettings settings;
};

// A stand-in for PyTorch's monitor thread: once a byte comes through the pipe it reads
// (polled with a bound only to fail), it does `then` (writes the dump).
std::thread on_first_byte(int reader, std::function<void()> then) {
  return std::thread([reader, then = std::move(then)] {
    pollfd p{reader, POLLIN, 0};
    char byte = 0;
    if (::poll(&p, 1, 20000) == 1 && ::read(reader, &byte, 1) == 1) then();
  });
}

// A stand-in for PyTorch's monitor thread: it reads the pipe and then writes the dump.
TEST_F(FlightRecorderCollect, AByteInThePipeBringsAFreshDump) {
  fs::path pipe = dir / "nccl_pipe_rank_0.pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  // Opened before diagnose writes, as PyTorch opens it at start-up; polled with a bound only to fail.
  int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  std::thread monitor = on_first_byte(
      reader, [&] { std::ofstream(dir / "nccl_trace_rank_0", std::ios::binary) << read_fixture("protocol2_rank_0"); });
  auto dump = collect_flight_recorder(settings, 20);
  monitor.join();
  ::close(reader);
  EXPECT_EQ(dump.skipped_reason, "");
  EXPECT_TRUE(dump.fresh);
  EXPECT_EQ(dump.pipe, pipe.string());
  EXPECT_EQ(dump.file, (dir / "nccl_trace_rank_0").string());
  EXPECT_EQ(dump.summary["last_started"]["collective_seq_id"], 2);
}

// A job that set no dump place writes to PyTorch's default, whichever its version has:
// the dump is looked for in each and found in the one written.
TEST_F(FlightRecorderCollect, ADumpInAnyOfTheDefaultPlacesIsFound) {
  fs::create_directories(dir / "home" / ".cache" / "torch");
  auto defaults = flight_recorder_settings({{"HOME", (dir / "home").string()},
                                            {"RANK", "1"},
                                            {"TORCH_NCCL_DEBUG_INFO_PIPE_FILE", (dir / "nccl_pipe_rank_").string()}});
  ASSERT_TRUE(defaults.askable()) << "a pipe and no buffer size: PyTorch 2.11 records by default";
  fs::path pipe = dir / "nccl_pipe_rank_1.pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const fs::path written = dir / "home" / ".cache" / "torch" / "comm_lib_trace_rank_1";
  std::thread monitor =
      on_first_byte(reader, [&] { std::ofstream(written, std::ios::binary) << read_fixture("protocol2_rank_0"); });
  auto dump = collect_flight_recorder(defaults, 20);
  monitor.join();
  ::close(reader);
  EXPECT_EQ(dump.skipped_reason, "");
  EXPECT_TRUE(dump.fresh);
  EXPECT_EQ(dump.file, written.string());
}

// A dump that takes longer than the bound (PyTorch importing and symbolising first): waited for
// while a thread is seen writing it, not otherwise.
TEST_F(FlightRecorderCollect, ADumpSeenOnItsWayIsWaitedForPastTheBound) {
  fs::path pipe = dir / "nccl_pipe_rank_0.pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  for (const bool seen : {false, true}) {
    fs::remove(dir / "nccl_trace_rank_0");
    int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    std::thread monitor = on_first_byte(reader, [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // longer than the bound below
      std::ofstream(dir / "nccl_trace_rank_0", std::ios::binary) << read_fixture("protocol2_rank_0");
    });
    auto writer = [seen] { return seen ? std::string("thread 9 \"pt_nccl_heartbt\" is writing it") : ""; };
    auto dump = collect_flight_recorder(settings, 0.3, {}, writer, 15);
    monitor.join();
    ::close(reader);
    if (seen) {
      EXPECT_TRUE(dump.fresh);
      EXPECT_EQ(dump.skipped_reason, "");
    } else {
      EXPECT_FALSE(dump.fresh);
      EXPECT_THAT(dump.skipped_reason, ::testing::HasSubstr("appeared within 0.3 s"));
      EXPECT_THAT(dump.skipped_reason, ::testing::HasSubstr("--fr-wait"));
    }
  }
}

// Ranks share the prefixes: rank 1 asks through its own pipe and reads its own dump, never
// rank 0's (whose pipe sorts first and whose dump may be newer).
TEST_F(FlightRecorderCollect, EachRankUsesItsOwnPipeAndDump) {
  fs::path pipe0 = dir / "nccl_pipe_rank_0.pipe", pipe1 = dir / "nccl_pipe_rank_1.pipe";
  ASSERT_EQ(::mkfifo(pipe0.c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(pipe1.c_str(), 0600), 0);
  int reader0 = ::open(pipe0.c_str(), O_RDONLY | O_NONBLOCK), reader1 = ::open(pipe1.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader0, 0);
  ASSERT_GE(reader1, 0);
  std::thread monitor = on_first_byte(reader1, [&] {
    std::ofstream(dir / "nccl_trace_rank_1", std::ios::binary) << read_fixture("protocol2_rank_0");
    std::ofstream(dir / "nccl_trace_rank_0", std::ios::binary) << read_fixture("protocol4_rank_0");  // newer
  });
  FlightRecorderSettings rank1 = settings;
  rank1.rank = 1;
  auto dump = collect_flight_recorder(rank1, 20);
  monitor.join();
  char byte = 0;
  EXPECT_LE(::read(reader0, &byte, 1), 0) << "rank 0's pipe was written";
  ::close(reader0);
  ::close(reader1);
  EXPECT_EQ(dump.pipe, pipe1.string());
  EXPECT_EQ(dump.file, (dir / "nccl_trace_rank_1").string());
  EXPECT_EQ(dump.summary["last_started"]["collective_seq_id"], 2);
}

TEST_F(FlightRecorderCollect, APipeNobodyReadsIsSaidAndAnOlderDumpStillSummarised) {
  ASSERT_EQ(::mkfifo((dir / "nccl_pipe_rank_0.pipe").c_str(), 0600), 0);
  std::ofstream(dir / "nccl_trace_rank_0", std::ios::binary) << read_fixture("protocol4_rank_0");
  auto dump = collect_flight_recorder(settings, 20);  // returns at once: open() fails with ENXIO
  EXPECT_THAT(dump.skipped_reason, ::testing::HasSubstr("nobody reads"));
  EXPECT_FALSE(dump.fresh);
  EXPECT_EQ(dump.summary["entries"], 3);
}

TEST_F(FlightRecorderCollect, OffOrWithoutPipeSaysWhy) {
  FlightRecorderSettings off = settings;
  off.buffer_size = 0;
  EXPECT_THAT(collect_flight_recorder(off, 1).skipped_reason, ::testing::HasSubstr("off"));
  auto dump = collect_flight_recorder(settings, 1);
  EXPECT_THAT(dump.skipped_reason, ::testing::HasSubstr("no pipe"));
  EXPECT_EQ(dump.file, "");
}
