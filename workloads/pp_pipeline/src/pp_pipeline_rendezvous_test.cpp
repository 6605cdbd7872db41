// Deciding whether the pipeline's messages really take the rendezvous path.
#include <gtest/gtest.h>

#include "rendezvous_threshold.hpp"

namespace pp {
namespace {

TEST(PpRendezvous, EagerLimitNamesOfOpenMpiTransports) {
  EXPECT_TRUE(is_eager_limit_variable("btl_tcp_eager_limit"));
  EXPECT_TRUE(is_eager_limit_variable("btl_vader_eager_limit"));
  EXPECT_FALSE(is_eager_limit_variable("btl_self_eager_limit"));
  EXPECT_FALSE(is_eager_limit_variable("btl_tcp_rndv_eager_limit"));
  EXPECT_FALSE(is_eager_limit_variable("btl_tcp_max_send_size"));
  EXPECT_FALSE(is_eager_limit_variable("coll_tuned_eager_limit"));
}

TEST(PpRendezvous, UcxThresholdText) {
  EXPECT_FALSE(parse_ucx_threshold(nullptr).has_value());
  EXPECT_FALSE(parse_ucx_threshold("").has_value());
  EXPECT_FALSE(parse_ucx_threshold("auto").has_value());
  EXPECT_EQ(parse_ucx_threshold("8192"), 8192u);
  EXPECT_EQ(parse_ucx_threshold("16k"), 16384u);
  EXPECT_EQ(parse_ucx_threshold("2M"), 2u << 20);
  EXPECT_EQ(parse_ucx_threshold("intra:4k,inter:64k"), 65536u);
}

TEST(PpRendezvous, ThresholdIsTheLargestLimit) {
  ThresholdReading r{{{"btl_vader_eager_limit", 4096}, {"btl_tcp_eager_limit", 65536}}};
  EXPECT_EQ(r.threshold_bytes(), 65536u);
  EXPECT_EQ(r.describe(), "btl_vader_eager_limit=4096,btl_tcp_eager_limit=65536");
  EXPECT_FALSE(rendezvous_problem(65537, r).has_value());
  ASSERT_TRUE(rendezvous_problem(65536, r).has_value());
  EXPECT_NE(rendezvous_problem(1000, r)->find("eagerly"), std::string::npos);
}

TEST(PpRendezvous, NoReadingIsAProblemNotAGuess) {
  const auto problem = rendezvous_problem(1u << 30, ThresholdReading{});
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("--rendezvous-threshold"), std::string::npos);
}

}  // namespace
}  // namespace pp
