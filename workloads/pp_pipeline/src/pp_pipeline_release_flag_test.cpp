// The shared-memory release flag between two stages (single-GPU mode); the
// CUDA registration is not needed to check the file and its words.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "release_flag.hpp"

namespace pp {
namespace {

TEST(PpReleaseFlag, ReceiverWritesWhatTheSenderReads) {
  ReleaseFlag sender = ReleaseFlag::create("unit");
  ReleaseFlag receiver = ReleaseFlag::open(sender.name());
  EXPECT_EQ(sender.released_steps(), 0u);
  receiver.release_step(0);
  EXPECT_EQ(sender.released_steps(), 1u);
  receiver.release_step(4);
  EXPECT_EQ(sender.released_steps(), 5u);
  EXPECT_FALSE(receiver.aborted());
  sender.set_abort();
  EXPECT_TRUE(receiver.aborted());
  EXPECT_GE(sender.mapped_bytes(), sizeof(ReleaseWords));
}

TEST(PpReleaseFlag, WorksAcrossProcesses) {
  ReleaseFlag sender = ReleaseFlag::create("fork");
  const std::string name = sender.name();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ReleaseFlag receiver = ReleaseFlag::open(name);
    receiver.release_step(2);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(sender.released_steps(), 3u);
}

TEST(PpReleaseFlag, UnlinkedNameLeavesMappingsWorking) {
  ReleaseFlag sender = ReleaseFlag::create("unlink");
  ReleaseFlag receiver = ReleaseFlag::open(sender.name());
  sender.unlink_name();
  EXPECT_THROW(ReleaseFlag::open(sender.name()), std::runtime_error);
  receiver.release_step(0);
  EXPECT_EQ(sender.released_steps(), 1u);
}

TEST(PpReleaseFlag, OpeningAMissingNameFailsClearly) {
  try {
    ReleaseFlag::open("/hangbench-pp-no-such-flag");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/hangbench-pp-no-such-flag"), std::string::npos);
  }
}

TEST(PpReleaseFlag, DestroyingTheCreatorRemovesTheName) {
  std::string name;
  {
    ReleaseFlag sender = ReleaseFlag::create("scope");
    name = sender.name();
  }
  EXPECT_EQ(shm_open(name.c_str(), O_RDWR, 0600), -1);
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace pp
