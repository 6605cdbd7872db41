// The MPI message layer on the CPU, two ranks: stage 0 sends, stage 1 receives.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <memory>
#include <thread>

#include "mpi_progress_thread.hpp"
#include "release_flag.hpp"
#include "stage_channel.hpp"

namespace pp {
namespace {

constexpr std::size_t kRendezvousBytes = 4u << 20;  // far above any default eager limit

class MessageLayer : public ::testing::Test {
 protected:
  void SetUp() override {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ASSERT_EQ(size, 2) << "run under mpirun -np 2";
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  }
  void TearDown() override {
    MPI_Barrier(comm_);
    MPI_Comm_free(&comm_);
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
};

TEST_F(MessageLayer, MessagesAreAboveTheEagerLimitsMpiReports) {
  const ThresholdReading reading = read_mpi_eager_limits();
  ASSERT_FALSE(reading.limits.empty()) << "Open MPI reports its eager limits through MPI_T";
  EXPECT_GT(kRendezvousBytes, reading.threshold_bytes()) << reading.describe();
  EXPECT_FALSE(rendezvous_problem(kRendezvousBytes, reading).has_value());
  EXPECT_TRUE(rendezvous_problem(reading.threshold_bytes(), reading).has_value());
}

// Regression: MPI_T_init_thread(MPI_THREAD_SINGLE) made Open MPI 4.1 report
// THREAD_SINGLE afterwards, which switched the native progress thread off.
TEST_F(MessageLayer, ReadingEagerLimitsKeepsTheThreadLevel) {
  int before = 0, after = 0;
  MPI_Query_thread(&before);
  read_mpi_eager_limits();
  MPI_Query_thread(&after);
  EXPECT_EQ(before, MPI_THREAD_MULTIPLE);
  EXPECT_EQ(after, before);
}

TEST_F(MessageLayer, ScheduleAndSampleStateRoundTripForSeveralSteps) {
  StageChannel channel(comm_, kRendezvousBytes);
  constexpr int kSteps = 3;
  for (int step = 0; step < kSteps; ++step) {
    if (channel.stage() == 0) {
      channel.post_sends(make_schedule(0, step, 4096), make_sample_state(0, step));
      channel.wait_sends();
      EXPECT_TRUE(channel.sends_complete());
    } else {
      const ReceivedStep got = channel.receive_step(step);
      EXPECT_EQ(got.schedule, make_schedule(0, step, 4096));
      EXPECT_EQ(got.sample_state, make_sample_state(0, step));
    }
  }
}

TEST_F(MessageLayer, ReceiverRejectsAMessageForAnotherStep) {
  StageChannel channel(comm_, kRendezvousBytes);
  if (channel.stage() == 0) {
    channel.post_sends(make_schedule(0, 7, 16), make_sample_state(0, 7));
    channel.wait_sends();
  } else {
    // Both messages are drained, so the sender's rendezvous sends complete.
    EXPECT_THROW(channel.receive_schedule(6), std::runtime_error);
    EXPECT_THROW(channel.receive_sample_state(6), std::runtime_error);
  }
}

TEST_F(MessageLayer, RoleChecksRefuseSendingFromTheLastStage) {
  StageChannel channel(comm_, kRendezvousBytes);
  if (channel.stage() == 1) {
    EXPECT_THROW(channel.post_schedule(make_schedule(1, 0, 1)), std::logic_error);
  } else {
    EXPECT_THROW(channel.receive_schedule(0), std::logic_error);
  }
}

// The CPU half of the PP cycle: stage 0 posts its rendezvous sends and then
// waits outside MPI until stage 1 says, through shared memory, that the
// schedule arrived. Only the native progress thread can complete the send.
TEST_F(MessageLayer, NativeProgressDeliversTheScheduleWhileTheSenderWaitsOutsideMpi) {
  int provided = 0;
  MPI_Query_thread(&provided);
  ASSERT_EQ(provided, MPI_THREAD_MULTIPLE) << "the native progress thread needs THREAD_MULTIPLE";
  StageChannel channel(comm_, kRendezvousBytes);
  char name[128] = {};
  std::unique_ptr<ReleaseFlag> flag;
  if (channel.stage() == 0) {
    flag = std::make_unique<ReleaseFlag>(ReleaseFlag::create("mpitest"));
    std::snprintf(name, sizeof name, "%s", flag->name().c_str());
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm_);
  if (channel.stage() == 1) flag = std::make_unique<ReleaseFlag>(ReleaseFlag::open(name));
  MPI_Barrier(comm_);
  if (channel.stage() == 0) flag->unlink_name();

  if (channel.stage() == 0) {
    hangbench::mpi_progress::MpiProgressThread progress(comm_, std::chrono::milliseconds(1));
    channel.post_sends(make_schedule(0, 0, 1), make_sample_state(0, 0));
    // A generous bound so that a broken progress path fails instead of hanging.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (flag->released_steps() < 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(flag->released_steps(), 1u) << "stage 1 never got the schedule";
    progress.stop();
    EXPECT_GT(progress.probe_count(), 0u);
    channel.wait_sends();
  } else {
    const ReceivedStep got = channel.receive_step(0);
    EXPECT_EQ(got.schedule, make_schedule(0, 0, 1));
    flag->release_step(0);
  }
}

}  // namespace
}  // namespace pp
