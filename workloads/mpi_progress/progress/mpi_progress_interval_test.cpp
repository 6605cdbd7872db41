// The progress-interval parser (workloads/mpi_progress/progress/progress_interval.hpp):
// the table from the TensorRT-LLM tests, plus the environment lookup order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <string>

#include "progress_interval.hpp"

namespace hangbench::mpi_progress {
namespace {

using std::chrono::microseconds;

struct Row {
  const char* text;  // nullptr = unset
  IntervalSource source;
  long long interval_us;
};

// Printed into each case's name (ctest lists it): the text, not the row's bytes.
void PrintTo(const Row& row, std::ostream* out) {
  *out << (row.text ? "\"" + std::string(row.text) + "\"" : std::string("unset")) << " -> " << row.interval_us << " us";
}

class IntervalTable : public ::testing::TestWithParam<Row> {};

TEST_P(IntervalTable, ParsesToTheExpectedIntervalAndCase) {
  const Row row = GetParam();
  const IntervalSetting s = parse_progress_interval(row.text);
  EXPECT_EQ(s.source, row.source) << (row.text ? row.text : "(unset)") << ": " << s.reason;
  EXPECT_EQ(s.interval, microseconds(row.interval_us));
  EXPECT_EQ(s.enabled(), row.interval_us > 0);
  EXPECT_FALSE(s.reason.empty());
}

INSTANTIATE_TEST_SUITE_P(
    TrtLlmCases, IntervalTable,
    ::testing::Values(Row{nullptr, IntervalSource::Unset, 5000},                        // unset
                      Row{"", IntervalSource::Unset, 5000},                             // set but empty
                      Row{"2000", IntervalSource::Parsed, 2000},                        // ordinary integer
                      Row{" 750 ", IntervalSource::Parsed, 750},                        // blanks tolerated
                      Row{"0", IntervalSource::Disabled, 0},                            // zero disables
                      Row{"-3", IntervalSource::Disabled, 0},                           // negative disables
                      Row{"abc", IntervalSource::Malformed, 5000},                      // malformed
                      Row{"10us", IntervalSource::Malformed, 5000},                     // trailing junk
                      Row{"2.5", IntervalSource::Malformed, 5000},                      // floating point
                      Row{"1e3", IntervalSource::Malformed, 5000},                      // exponent form
                      Row{"1000000", IntervalSource::Parsed, 1000000},                  // the maximum
                      Row{"1000001", IntervalSource::AboveMaximum, 5000},               // above it
                      Row{"9223372036854775807", IntervalSource::AboveMaximum, 5000},   // int64 max
                      Row{"9223372036854775808", IntervalSource::OutOfRange, 5000},     // beyond int64
                      Row{"-9223372036854775809", IntervalSource::OutOfRange, 5000}));  // beyond, negative

TEST(IntervalReason, NamesTheVariableAndTheFallback) {
  const IntervalSetting s = parse_progress_interval("2.5", "TLLM_PP_MPI_PROGRESS_INTERVAL_US");
  EXPECT_EQ(s.variable, "TLLM_PP_MPI_PROGRESS_INTERVAL_US");
  EXPECT_EQ(s.raw, "2.5");
  EXPECT_NE(s.reason.find("TLLM_PP_MPI_PROGRESS_INTERVAL_US"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("default"), std::string::npos) << s.reason;
}

class IntervalEnvironment : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv(kIntervalEnvVar);
    unsetenv(kIntervalEnvAlias);
  }
};

TEST_F(IntervalEnvironment, UnsetGivesTheDefault) {
  const IntervalSetting s = progress_interval_from_env();
  EXPECT_EQ(s.source, IntervalSource::Unset);
  EXPECT_EQ(s.interval, microseconds(kDefaultIntervalUs));
}

TEST_F(IntervalEnvironment, TensorRtLlmAliasIsRead) {
  setenv(kIntervalEnvAlias, "20000", 1);
  const IntervalSetting s = progress_interval_from_env();
  EXPECT_EQ(s.interval, microseconds(20000));
  EXPECT_EQ(s.variable, kIntervalEnvAlias);
}

TEST_F(IntervalEnvironment, HangbenchNameWinsOverTheAlias) {
  setenv(kIntervalEnvAlias, "20000", 1);
  setenv(kIntervalEnvVar, "0", 1);
  const IntervalSetting s = progress_interval_from_env();
  EXPECT_EQ(s.source, IntervalSource::Disabled);
  EXPECT_EQ(s.variable, kIntervalEnvVar);
}

TEST(IntervalSourceNames, AreDistinct) {
  EXPECT_EQ(to_string(IntervalSource::Unset), "unset");
  EXPECT_EQ(to_string(IntervalSource::AboveMaximum), "above-maximum");
  EXPECT_EQ(to_string(IntervalSource::OutOfRange), "out-of-range");
}

}  // namespace
}  // namespace hangbench::mpi_progress
