// Cell expansion: cartesian product in file order, excludes, overrides, templating.
#include <gtest/gtest.h>

#include "hangbench/matrix.hpp"

namespace hangbench {
namespace {

const MatrixEnvironment kEnv{"/w", "/n"};

const char* kFull = R"(name = "socket"
command = "{workloads}/st --close={close} --helper={helper} --lib={lib}"
trials = 5
timeout = 2.5
concurrency = 3
alpha = 0.05
grace = 0.5
stacks = false
expect = "no-hang"
hash = ["{lib}"]

[axes]
helper = ["after", "before", "none"]
close = ["close-only", "shutdown"]

[vars]
lib = "{nccl_cache}/{close}/libnccl.so.2"
tag = "{lib}:{cell}"

[env]
HB_CLOSE = "{close}"
HB_TAG = "{tag}"
HB_DIR = "{trial_dir}"

[[exclude]]
helper = "none"
close = "shutdown"

[[cell]]
match = { close = "close-only", helper = "after" }
expect = "hang"
trials = 30
timeout = 10.0
env = { EXTRA = "1" }

[[compare]]
name = "close-only vs shutdown"
a = { close = "close-only", helper = "after" }
b = { close = "shutdown", helper = "after" }
)";

const Cell* find(const Matrix& m, const std::string& id) {
  for (const auto& c : m.cells) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

TEST(MatrixExpand, CartesianProductInFileOrderMinusExcludes) {
  Matrix m = parse_matrix(kFull, "dir/m.toml", kEnv);
  std::vector<std::string> ids;
  for (const auto& c : m.cells) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"helper=after,close=close-only", "helper=after,close=shutdown",
                                           "helper=before,close=close-only", "helper=before,close=shutdown",
                                           "helper=none,close=close-only"}));
}

TEST(MatrixExpand, TopLevelSettings) {
  Matrix m = parse_matrix(kFull, "dir/m.toml", kEnv);
  EXPECT_EQ(m.concurrency, 3);
  EXPECT_DOUBLE_EQ(m.alpha, 0.05);
  EXPECT_DOUBLE_EQ(m.grace_s, 0.5);
  EXPECT_FALSE(m.capture_stacks);
  ASSERT_EQ(m.comparisons.size(), 1u);
  EXPECT_EQ(m.comparisons[0].name, "close-only vs shutdown");
  EXPECT_EQ(m.comparisons[0].b.at("close"), "shutdown");
}

TEST(MatrixExpand, OverridesApplyOnlyToMatchingCells) {
  Matrix m = parse_matrix(kFull, "dir/m.toml", kEnv);
  const Cell* hot = find(m, "helper=after,close=close-only");
  const Cell* cold = find(m, "helper=before,close=shutdown");
  ASSERT_TRUE(hot && cold);
  EXPECT_EQ(hot->expect, Expectation::Hang);
  EXPECT_EQ(hot->trials, 30);
  EXPECT_DOUBLE_EQ(hot->timeout_s, 10.0);
  EXPECT_EQ(hot->env.at("EXTRA"), "1");
  EXPECT_EQ(cold->expect, Expectation::NoHang);
  EXPECT_EQ(cold->trials, 5);
  EXPECT_DOUBLE_EQ(cold->timeout_s, 2.5);
  EXPECT_EQ(cold->env.count("EXTRA"), 0u);
}

TEST(MatrixExpand, TemplatingOfCommandEnvVarsAndHash) {
  Matrix m = parse_matrix(kFull, "dir/m.toml", kEnv);
  const Cell* c = find(m, "helper=before,close=shutdown");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->argv, (std::vector<std::string>{"/w/st", "--close=shutdown", "--helper=before",
                                               "--lib=/n/shutdown/libnccl.so.2"}));
  EXPECT_EQ(c->env.at("HB_CLOSE"), "shutdown");
  EXPECT_EQ(c->env.at("HB_TAG"), "/n/shutdown/libnccl.so.2:helper=before,close=shutdown");
  EXPECT_EQ(c->env.at("HB_DIR"), "{trial_dir}");  // filled per trial
  EXPECT_EQ(c->hash_files, (std::vector<std::string>{"/n/shutdown/libnccl.so.2"}));
  EXPECT_EQ(c->params.at("helper"), "before");
}

TEST(MatrixExpand, ArrayCommandKeepsSpacesAndMatrixDirIsAbsolute) {
  Matrix m =
      parse_matrix("name = \"t\"\ncommand = [\"sh\", \"-c\", \"echo {a} b\", \"{matrix_dir}\"]\n[axes]\na = [1, 2]\n",
                   "/tmp/x/m.toml", kEnv);
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[1].argv, (std::vector<std::string>{"sh", "-c", "echo 2 b", "/tmp/x"}));
}

TEST(MatrixExpand, NoAxesGivesOneDefaultCell) {
  Matrix m = parse_matrix("name = \"t\"\ncommand = \"true\"\n", "m.toml", kEnv);
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.cells[0].id, "default");
}

TEST(MatrixExpand, LauncherIsCopiedIntoEveryCell) {
  Matrix m = parse_matrix(
      "name = \"t\"\ncommand = \"w\"\n[launcher]\nkind = \"mpirun\"\nranks = 4\nargs = [\"--oversubscribe\"]\n",
      "m.toml", kEnv);
  EXPECT_EQ(m.cells[0].launcher.kind, LauncherKind::Mpirun);
  EXPECT_EQ(m.cells[0].launcher.ranks, 4);
  EXPECT_EQ(m.cells[0].launcher.extra_args, (std::vector<std::string>{"--oversubscribe"}));
}

// World size as an axis: one matrix runs 2 and 4 ranks (issue 26).
TEST(MatrixExpand, TemplatedRanksFollowTheAxis) {
  Matrix m = parse_matrix(
      "name = \"t\"\ncommand = \"w --world={ranks}\"\n[axes]\nranks = [2, 4]\n[launcher]\nkind = \"mpirun\"\n"
      "ranks = \"{ranks}\"\n",
      "m.toml", kEnv);
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[0].launcher.ranks, 2);
  EXPECT_EQ(m.cells[1].launcher.ranks, 4);
  EXPECT_EQ(m.cells[1].argv.back(), "--world=4");
}

TEST(MatrixExpand, TemplatedRanksThatAreNotAWholeNumberNameTheLine) {
  try {
    parse_matrix(
        "name = \"t\"\ncommand = \"w\"\n[axes]\nranks = [\"two\"]\n[launcher]\nkind = \"mpirun\"\n"
        "ranks = \"{ranks}\"\n",
        "m.toml", kEnv);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 7);
    EXPECT_NE(std::string(e.what()).find("\"two\""), std::string::npos) << e.what();
  }
}

TEST(MatrixExpand, StacksForTheFirstHangOfEachCellOnly) {
  Matrix first = parse_matrix("name = \"t\"\ncommand = \"w\"\nstacks = \"first-hang\"\n", "m.toml", kEnv);
  EXPECT_TRUE(first.capture_stacks);
  EXPECT_TRUE(first.stacks_first_hang_only);
  Matrix every = parse_matrix("name = \"t\"\ncommand = \"w\"\nstacks = true\n", "m.toml", kEnv);
  EXPECT_TRUE(every.capture_stacks);
  EXPECT_FALSE(every.stacks_first_hang_only);
  EXPECT_THROW(parse_matrix("name = \"t\"\ncommand = \"w\"\nstacks = \"some\"\n", "m.toml", kEnv), ConfigError);
}

TEST(MatrixExpand, BracesThatAreNotNamesStayAsTheyAre) {
  Matrix m = parse_matrix("name = \"t\"\ncommand = [\"w\", \"{\\\"k\\\": 1}\", \"{}\"]\n", "m.toml", kEnv);
  EXPECT_EQ(m.cells[0].argv, (std::vector<std::string>{"w", "{\"k\": 1}", "{}"}));
}

TEST(MatrixExpand, FilterKeepsMatchingCellsAndRejectsUnknownAxes) {
  Matrix m = parse_matrix(kFull, "m.toml", kEnv);
  filter_cells(m, {{"close", "shutdown"}});
  ASSERT_EQ(m.cells.size(), 2u);
  for (const auto& c : m.cells) EXPECT_EQ(c.params.at("close"), "shutdown");
  EXPECT_THROW(filter_cells(m, {{"nope", "1"}}), ConfigError);
  EXPECT_THROW(filter_cells(m, {{"close", "close-only"}}), ConfigError);  // matches nothing left
}

TEST(MatrixExpand, TrialPlaceholdersAndSanitizedIds) {
  EXPECT_EQ(expand_trial_placeholders("--out={trial_dir}/x --i={trial}", "/r/t/0", 7), "--out=/r/t/0/x --i=7");
  EXPECT_EQ(sanitize_cell_id("build=2.17.1,fork=after"), "build=2.17.1+fork=after");
  EXPECT_EQ(sanitize_cell_id("a=x/../y"), "a=x_.._y");
}

// Names that sanitize alike ("a/b", "a_b"; "ü", "é") still get folders of their own.
TEST(MatrixExpand, CellFoldersAreUniquePerCellAndBounded) {
  EXPECT_EQ(sanitize_cell_id("x=a/b"), sanitize_cell_id("x=a_b"));
  EXPECT_NE(cell_folder_name("x=a/b"), cell_folder_name("x=a_b"));
  EXPECT_EQ(sanitize_cell_id("x=\u00fc"), sanitize_cell_id("x=\u00e9"));
  EXPECT_NE(cell_folder_name("x=\u00fc"), cell_folder_name("x=\u00e9"));
  EXPECT_EQ(cell_folder_name("x=a/b").rfind("x=a_b-", 0), 0u);  // readable, then the hash
  EXPECT_EQ(cell_folder_name("x=a/b").size(), std::string("x=a_b-").size() + 8);
  EXPECT_EQ(cell_folder_name(std::string(5000, 'v')).size(), 80u + 1 + 8);  // fits a file name
}

}  // namespace
}  // namespace hangbench
