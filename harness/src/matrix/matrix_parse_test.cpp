// Matrix files: every configuration error names file:line and nothing else happens.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "hangbench/matrix.hpp"

namespace hangbench {
namespace {

const MatrixEnvironment kEnv{"/w", "/n"};

// Parses and returns the ConfigError; fails the test if parsing succeeds.
ConfigError error_of(const std::string& text) {
  try {
    parse_matrix(text, "m.toml", kEnv);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << text;
  return ConfigError("", 0, "");
}

const char* kHeader = "name = \"t\"\ncommand = \"prog --x={a}\"\n";  // lines 1-2

TEST(MatrixParse, MinimalFileGivesOneCellPerAxisValue) {
  Matrix m = parse_matrix(std::string(kHeader) + "[axes]\na = [\"1\", \"2\"]\n", "m.toml", kEnv);
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.name, "t");
  EXPECT_EQ(m.cells[0].id, "a=1");
  EXPECT_EQ(m.cells[0].argv, (std::vector<std::string>{"prog", "--x=1"}));
  EXPECT_EQ(m.cells[0].trials, 20);
  EXPECT_DOUBLE_EQ(m.cells[0].timeout_s, 10);
  EXPECT_EQ(m.sha256.size(), 64u);
}

// Every deadline ends: inf, a year or a grace beyond 600 s are refused at their line.
TEST(MatrixParse, DeadlinesAndValuesAreBounded) {
  EXPECT_EQ(std::string(error_of(std::string(kHeader) + "timeout = inf\n").what()),
            "m.toml:3: timeout must be at most 604800 seconds (a week)");
  EXPECT_EQ(std::string(error_of(std::string(kHeader) + "grace = inf\n").what()),
            "m.toml:3: grace must be between 0 and 600 seconds");
  EXPECT_EQ(std::string(error_of(std::string(kHeader) + "grace = nan\n").what()),
            "m.toml:3: grace must be between 0 and 600 seconds");
  EXPECT_EQ(std::string(error_of(std::string(kHeader) + "[phase_timeouts]\nx = 31536000\n").what()),
            "m.toml:4: [phase_timeouts].x must be at most 604800 seconds (a week)");
  EXPECT_EQ(std::string(error_of(std::string(kHeader) + "trials = 2000000000\n").what()),
            "m.toml:3: trials must be at most 100000000");
  EXPECT_NE(std::string(error_of(std::string(kHeader) + "[axes]\na = [\"" + std::string(201, 'v') + "\"]\n").what())
                .find("m.toml:4: axis 'a' has a value of 201 bytes; at most 200"),
            std::string::npos);
  EXPECT_NO_THROW(parse_matrix(
      std::string(kHeader) + "timeout = 604800\ngrace = 600\n[axes]\na = [\"" + std::string(200, 'v') + "\"]\n",
      "m.toml", kEnv));
}

// A run plans at most kMaxTotalTrials over all its cells (issue 41, item 7): past
// it, the file is refused at the line that set the trials of the cell that crossed
// the bound, naming the limit, before any per-trial plan exists.
TEST(MatrixParse, TheTotalOfTrialsIsBoundedAtTheLineThatSetsThem) {
  // One cell of 20,000,000 trials: within the bound per cell, past the run's.
  const std::string one = error_of(std::string(kHeader) + "trials = 20000000\n[axes]\na = [\"1\"]\n").what();
  EXPECT_EQ(one.rfind("m.toml:3: the matrix plans more than 10000000 trials in all (at most 10000000 in a run", 0), 0u)
      << one;
  EXPECT_NE(one.find("with trials = 20000000"), std::string::npos) << one;
  // 100 x 100 cells of 1,001 trials (10,010,000): the [[cell]] line that raised one cell's share.
  std::string values;
  for (int i = 0; i < 100; ++i) values += (i ? ", " : "") + ("\"" + std::to_string(i) + "\"");
  const std::string axes = "[axes]\na = [" + values + "]\nb = [" + values + "]\n";  // lines 4-6
  const std::string many = error_of(std::string(kHeader) + "trials = 1000\n" + axes +
                                    "[[cell]]\nmatch = { a = \"99\", b = \"99\" }\ntrials = 200000\n")
                               .what();
  EXPECT_EQ(many.rfind("m.toml:9: the matrix plans more than 10000000 trials in all", 0), 0u) << many;
  // At the bound exactly it is fine: 10,000 cells of 1,000.
  Matrix at = parse_matrix(std::string(kHeader) + "trials = 1000\n" + axes, "m.toml", kEnv);
  EXPECT_EQ(at.cells.size(), 10000u);
}

TEST(MatrixParse, PhaseTimeoutsMergeFromMatrixAndCells) {
  Matrix m = parse_matrix(std::string(kHeader) +
                              "phase_timeouts = { teardown_begin = 5.0, init_done = 60 }\n"
                              "[axes]\na = [\"1\", \"2\"]\n"
                              "[[cell]]\nmatch = { a = \"2\" }\nphase_timeouts = { teardown_begin = 2.5 }\n",
                          "m.toml", kEnv);
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[0].phase_timeouts_s, (std::map<std::string, double>{{"init_done", 60}, {"teardown_begin", 5}}));
  EXPECT_EQ(m.cells[1].phase_timeouts_s, (std::map<std::string, double>{{"init_done", 60}, {"teardown_begin", 2.5}}));
}

TEST(MatrixParse, NonPositivePhaseTimeoutNamesLine) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[phase_timeouts]\nteardown_begin = 0\n");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(std::string(e.what()).find("phase_timeouts"), std::string::npos) << e.what();
}

TEST(MatrixParse, TomlSyntaxErrorNamesLine) {
  auto e = error_of(std::string(kHeader) + "trials = = 3\n");
  EXPECT_EQ(e.file(), "m.toml");
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("m.toml:3:"), std::string::npos) << e.what();
}

TEST(MatrixParse, UnknownKeyNamesKeyAndLine) {
  auto e = error_of(std::string(kHeader) + "\ntrails = 3\n[axes]\na = [\"1\"]\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.message().find("unknown key 'trails'"), std::string::npos) << e.message();
}

TEST(MatrixParse, WrongTypeOfTrials) {
  auto e = error_of(std::string(kHeader) + "trials = \"many\"\n[axes]\na = [\"1\"]\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("trials must be an integer"), std::string::npos);
}

TEST(MatrixParse, NonPositiveTrials) {
  EXPECT_EQ(error_of(std::string(kHeader) + "trials = 0\n[axes]\na = [\"1\"]\n").line(), 3);
  EXPECT_EQ(error_of(std::string(kHeader) + "trials = -4\n[axes]\na = [\"1\"]\n").line(), 3);
}

TEST(MatrixParse, NonPositiveTimeout) {
  auto e = error_of(std::string(kHeader) + "\n\ntimeout = 0.0\n[axes]\na = [\"1\"]\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.message().find("timeout must be > 0"), std::string::npos);
  EXPECT_EQ(error_of(std::string(kHeader) + "timeout = -1\n[axes]\na = [\"1\"]\n").line(), 3);
}

TEST(MatrixParse, EmptyAxis) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\nb = []\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.message().find("axis 'b' has no values"), std::string::npos);
}

TEST(MatrixParse, AxisMustBeAnArray) { EXPECT_EQ(error_of(std::string(kHeader) + "[axes]\na = \"1\"\n").line(), 4); }

TEST(MatrixParse, DuplicateAxisValue) {
  EXPECT_EQ(error_of(std::string(kHeader) + "[axes]\na = [\"1\",\n \"1\"]\n").line(), 5);
}

TEST(MatrixParse, MissingNameOrCommand) {
  EXPECT_NE(error_of("command = \"x\"\n").message().find("'name'"), std::string::npos);
  EXPECT_NE(error_of("name = \"x\"\n").message().find("'command'"), std::string::npos);
}

TEST(MatrixParse, BadExpectation) {
  auto e = error_of(std::string(kHeader) + "expect = \"maybe\"\n[axes]\na = [\"1\"]\n");
  EXPECT_EQ(e.line(), 3);
}

TEST(MatrixParse, BadLauncherKindAndUnknownLauncherKey) {
  EXPECT_EQ(error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[launcher]\nkind = \"ssh\"\n").line(), 6);
  EXPECT_EQ(error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[launcher]\nnodes = 2\n").line(), 6);
  EXPECT_EQ(error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[launcher]\nranks = 0\n").line(), 6);
}

TEST(MatrixParse, UnknownKeyInCellOverride) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[[cell]]\nmatch = { a = \"1\" }\ntrails = 4\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_NE(e.message().find("[[cell]]"), std::string::npos);
}

TEST(MatrixParse, CellOverrideWithoutMatch) {
  EXPECT_EQ(error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[[cell]]\ntrials = 4\n").line(), 5);
}

TEST(MatrixParse, ExcludeNamingUnknownAxis) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[[exclude]]\nb = \"1\"\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.message().find("'b', which is not an axis"), std::string::npos) << e.message();
}

TEST(MatrixParse, MatchWithUnknownValue) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[[cell]]\nmatch = { a = \"9\" }\n");
  EXPECT_EQ(e.line(), 6);
}

TEST(MatrixParse, UnknownTemplateNameNamesItsLine) {
  auto e = error_of("name = \"t\"\n\n\n\ncommand = \"prog {nope}\"\n[axes]\na = [\"1\"]\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.message().find("{nope}"), std::string::npos);
}

TEST(MatrixParse, EverythingExcluded) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[[exclude]]\na = \"1\"\n");
  EXPECT_NE(e.message().find("no cells"), std::string::npos);
}

TEST(MatrixParse, CompareNeedsBothSides) {
  auto e = error_of(std::string(kHeader) + "[axes]\na = [\"1\"]\n[[compare]]\na = { a = \"1\" }\n");
  EXPECT_EQ(e.line(), 5);
}

TEST(MatrixParse, AlphaOutOfRange) {
  EXPECT_EQ(error_of(std::string(kHeader) + "alpha = 1.5\n[axes]\na = [\"1\"]\n").line(), 3);
}

TEST(MatrixParse, MissingFileIsAConfigError) {
  try {
    load_matrix("/nonexistent/hangbench/matrix.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos);
  }
}

TEST(MatrixParse, ShippedMatricesParse) {
  for (const char* rel : {"/workloads/test_workloads/matrix.toml", "/tests/fixtures/matrix/small.toml"}) {
    Matrix m = load_matrix(std::string(HB_SOURCE_DIR) + rel, kEnv);
    EXPECT_FALSE(m.cells.empty()) << rel;
  }
}

}  // namespace
}  // namespace hangbench

namespace hangbench {
namespace {

// A NUL would cut an argument or an environment entry; '=' or nothing as a variable's
// name makes another variable: all refused, naming the line (issue 41, item 8).
TEST(MatrixParse, NulCharactersAndBadEnvironmentNamesNameTheirLine) {
  struct Case {
    std::string text;
    int line;
    std::string words;
  };
  const std::vector<Case> cases = {
      {std::string(kHeader) + "[axes]\na = [\"x\\u0000y\"]\n", 4, "NUL"},
      {"name = \"t\"\ncommand = [\"prog\", \"a\\u0000b\"]\n", 2, "NUL"},
      {std::string(kHeader) + "[env]\nA = \"x\\u0000y\"\n", 4, "NUL"},
      {std::string(kHeader) + "[env]\n\"A=B\" = \"x\"\n", 4, "holds '='"},
      {std::string(kHeader) + "[env]\n\"\" = \"x\"\n", 4, "empty variable name"},
      {std::string(kHeader) + "[env]\n\"A\\u0000B\" = \"x\"\n", 4, "NUL"},
      {std::string(kHeader) + "[axes]\na = [\"1\"]\n[[cell]]\nmatch = { a = \"1\" }\nenv = { \"X=Y\" = \"1\" }\n", 7,
       "holds '='"},
  };
  for (const auto& c : cases) {
    ConfigError e = error_of(c.text);
    EXPECT_EQ(e.line(), c.line) << c.text;
    EXPECT_NE(std::string(e.what()).find(c.words), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hangbench
