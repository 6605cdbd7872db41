// write_file_atomically: no link followed, every write checked, a device written into (issue 41).
#include "hangbench/atomic_write.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace hangbench {
namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class AtomicWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hb_atomic_write_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "victim") << "precious\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A link planted at PATH.tmp (report.html.tmp in --out) once had a run truncate the file it named.
TEST_F(AtomicWriteTest, ALinkAtTheTemporaryNameIsRemovedNotWrittenThrough) {
  fs::create_symlink(dir_ / "victim", dir_ / "report.html.tmp");
  write_file_atomically((dir_ / "report.html").string(), "ours\n");
  EXPECT_EQ(read_text(dir_ / "victim"), "precious\n");
  EXPECT_EQ(read_text(dir_ / "report.html"), "ours\n");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "report.html.tmp")));
}

TEST_F(AtomicWriteTest, ALinkAtThePathIsReplacedNotWrittenThrough) {
  fs::create_symlink(dir_ / "victim", dir_ / "report.md");
  write_file_atomically((dir_ / "report.md").string(), "ours\n");
  EXPECT_EQ(read_text(dir_ / "victim"), "precious\n");
  EXPECT_FALSE(fs::is_symlink(dir_ / "report.md"));
  EXPECT_EQ(read_text(dir_ / "report.md"), "ours\n");
}

// A full device: the error names the file, and the device is not replaced by a file.
TEST_F(AtomicWriteTest, AFullDeviceIsAnErrorNamingItAndStaysADevice) {
  ASSERT_TRUE(fs::is_character_file("/dev/full"));
  try {
    write_file_atomically("/dev/full", "lost\n");
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write /dev/full: No space left on device"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_FALSE(fs::exists("/dev/full.tmp"));
}

TEST_F(AtomicWriteTest, AFolderIsAnErrorAndIsKept) {
  EXPECT_THROW(write_file_atomically(dir_.string(), "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(dir_));
}

}  // namespace
}  // namespace hangbench
