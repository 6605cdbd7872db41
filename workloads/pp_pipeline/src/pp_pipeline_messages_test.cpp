// Wire format of the schedule and sample-state messages.
#include <gtest/gtest.h>

#include <stdexcept>

#include "stage_messages.hpp"

namespace pp {
namespace {

TEST(PpMessages, ScheduleRoundTripsAtRendezvousSize) {
  const ScheduleMessage sent = make_schedule(2, 5, 123456);
  const auto wire = encode(sent, 1u << 20);
  ASSERT_EQ(wire.size(), 1u << 20);
  std::string error;
  const auto got = decode_schedule(wire, &error);
  ASSERT_TRUE(got.has_value()) << error;
  EXPECT_EQ(*got, sent);
}

TEST(PpMessages, SampleStateRoundTripsAtTheMinimalSize) {
  const SampleStateMessage sent = make_sample_state(1, 9);
  std::string error;
  const auto got = decode_sample_state(encode(sent, minimal_wire_bytes()), &error);
  ASSERT_TRUE(got.has_value()) << error;
  EXPECT_EQ(*got, sent);
}

TEST(PpMessages, KindMismatchIsRejected) {
  std::string error;
  EXPECT_FALSE(decode_sample_state(encode(make_schedule(0, 0, 1), 4096), &error).has_value());
  EXPECT_NE(error.find("kind"), std::string::npos) << error;
}

TEST(PpMessages, DamagedFillerFailsTheChecksum) {
  auto wire = encode(make_schedule(0, 3, 1), 8192);
  wire[5000] ^= std::byte{0x01};
  std::string error;
  EXPECT_FALSE(decode_schedule(wire, &error).has_value());
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
}

TEST(PpMessages, TruncatedMessageIsRejected) {
  const auto wire = encode(make_schedule(0, 3, 1), 8192);
  std::string error;
  EXPECT_FALSE(decode_schedule(std::span(wire).first(4096), &error).has_value());
  EXPECT_FALSE(decode_schedule(std::span(wire).first(8), &error).has_value());
}

TEST(PpMessages, TooSmallWireSizeThrows) {
  EXPECT_THROW(encode(make_schedule(0, 0, 1), minimal_wire_bytes() - 1), std::invalid_argument);
}

TEST(PpMessages, MessagesDifferPerStepAndStage) {
  EXPECT_NE(make_schedule(0, 1, 8), make_schedule(0, 2, 8));
  EXPECT_NE(make_sample_state(0, 1), make_sample_state(1, 1));
}

}  // namespace
}  // namespace pp
