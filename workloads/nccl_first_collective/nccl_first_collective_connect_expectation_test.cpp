#include <gtest/gtest.h>

#include "connect_expectation.hpp"

namespace hangbench::nccl_first_collective {
namespace {

TEST(ConnectExpectation, ReleasesBefore2_22_3ConnectAtInit) {
  EXPECT_FALSE(connects_at_first_collective(22105, true, nullptr, nullptr));
  EXPECT_FALSE(connects_at_first_collective(21903, true, "1", "1"));
}

TEST(ConnectExpectation, From2_22_3TheDefaultsConnectAtTheFirstCollectiveWhereCuMemIsSupported) {
  EXPECT_TRUE(connects_at_first_collective(22203, true, nullptr, nullptr));
  EXPECT_TRUE(connects_at_first_collective(23206, true, "", ""));
  EXPECT_FALSE(connects_at_first_collective(22203, false, nullptr, nullptr));
}

TEST(ConnectExpectation, RuntimeConnectZeroConnectsAtInit) {
  EXPECT_FALSE(connects_at_first_collective(22203, true, nullptr, "0"));
  EXPECT_TRUE(connects_at_first_collective(22203, true, nullptr, "2"));
}

TEST(ConnectExpectation, CuMemEnableOverridesTheDriversSupport) {
  EXPECT_FALSE(connects_at_first_collective(22203, true, "0", nullptr));
  EXPECT_TRUE(connects_at_first_collective(22203, false, "1", nullptr));
  // -1 is neither "on" nor auto-detect: off, as NCCL reads it.
  EXPECT_FALSE(connects_at_first_collective(22203, true, "-1", nullptr));
  EXPECT_TRUE(connects_at_first_collective(22203, true, "not a number", nullptr));
}

}  // namespace
}  // namespace hangbench::nccl_first_collective
