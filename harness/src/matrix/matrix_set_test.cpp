// `run --set KEY=VALUE`: matrix keys changed from the command line, checked as
// the file's own, without a sed-edited copy of the file.
#include <gtest/gtest.h>

#include <string>

#include "hangbench/matrix.hpp"

namespace hangbench {
namespace {

const char* kText =
    "name = \"t\"\ncommand = \"prog --x={a} --y={b}\"\ntrials = 5\nstacks = true\n"
    "[axes]\nb = [\"1\", \"2\"]\na = [\"p\", \"q\"]\n";

Matrix with(std::vector<std::string> sets) {
  MatrixEnvironment env{"/w", "/n", std::move(sets)};
  return parse_matrix(kText, "m.toml", env);
}

TEST(MatrixSet, ValuesAndTablesAreSetFromTheCommandLine) {
  Matrix m = with({"trials=2", "stacks=false", "phase_timeouts.teardown_begin=8"});
  ASSERT_EQ(m.cells.size(), 4u);
  EXPECT_EQ(m.cells[0].trials, 2);
  EXPECT_FALSE(m.capture_stacks);
  EXPECT_DOUBLE_EQ(m.cells[0].phase_timeouts_s.at("teardown_begin"), 8.0);
}

TEST(MatrixSet, AnAxisSetInPlaceKeepsTheFilesAxisOrder) {
  Matrix m = with({"axes.b=[\"2\"]"});
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[0].id, "b=2,a=p");  // b stays the first axis, as in the file
}

TEST(MatrixSet, TheRunsMatrixHashCoversTheSets) {
  EXPECT_NE(with({}).sha256, with({"trials=2"}).sha256);
  EXPECT_EQ(with({"trials=2"}).sha256, with({"trials=2"}).sha256);
}

TEST(MatrixSet, BadSetsAreRefusedNamingTheProblem) {
  EXPECT_THROW(with({"trials"}), UsageError);
  EXPECT_THROW(with({"name=x y"}), UsageError);
  try {
    with({"bogus=1"});
    FAIL() << "an unknown key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'bogus'"), std::string::npos) << e.what();
  }
  try {
    with({"trials=-1"});
    FAIL() << "trials=-1 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("trials must be > 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hangbench
