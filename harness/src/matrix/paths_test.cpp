// A binary copied to another machine finds the checkout through HANGBENCH_SOURCE_DIR.
#include "hangbench/paths.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "hangbench/matrix.hpp"

namespace hangbench {
namespace {

class SourceDirOverride : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("HANGBENCH_SOURCE_DIR");
    unsetenv("HANGBENCH_NCCL_CACHE");
    dir_ = std::filesystem::temp_directory_path() / ("hb_paths_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "workloads" / "socket_teardown");
    std::ofstream(dir_ / "workloads" / "socket_teardown" / "matrix.toml") << "# stand-in\n";
  }
  void TearDown() override {
    unsetenv("HANGBENCH_SOURCE_DIR");
    unsetenv("HANGBENCH_NCCL_CACHE");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(SourceDirOverride, CompiledInByDefault) {
  EXPECT_EQ(source_root(), HB_SOURCE_DIR);
  EXPECT_EQ(default_nccl_cache(), std::string(HB_SOURCE_DIR) + "/.cache/nccl");
}

TEST_F(SourceDirOverride, EnvironmentWinsForMatricesAndCache) {
  setenv("HANGBENCH_SOURCE_DIR", dir_.c_str(), 1);
  EXPECT_EQ(source_root(), dir_.string());
  EXPECT_EQ(default_matrix_path(), (dir_ / "workloads" / "socket_teardown" / "matrix.toml").string());
  EXPECT_EQ(default_nccl_cache(), dir_.string() + "/.cache/nccl");
  setenv("HANGBENCH_NCCL_CACHE", "/elsewhere/nccl", 1);
  EXPECT_EQ(default_nccl_cache(), "/elsewhere/nccl");
}

TEST(PathEscape, OnlyRelativePathsWithoutDotDotStayInside) {
  EXPECT_EQ(path_escape_problem("trials/r/c-1234abcd/0/evidence"), "");
  EXPECT_EQ(path_escape_problem("/etc/passwd"), "is absolute");
  EXPECT_EQ(path_escape_problem("../../somewhere"), "goes up with '..'");
  EXPECT_EQ(path_escape_problem("trials/../../x"), "goes up with '..'");
  EXPECT_EQ(path_escape_problem(""), "is empty");
}

}  // namespace
}  // namespace hangbench
