// Placement of ranks on GPUs and the NCCL transport read back from NCCL's log.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "nccl_debug_log.hpp"
#include "placement.hpp"

namespace hangbench::workload {
namespace {

TEST(Placement, WordsRoundTripAndOthersAreRefused) {
  for (Placement p : {Placement::GpuPerRank, Placement::SharedGpu}) EXPECT_EQ(placement_from_string(to_string(p)), p);
  EXPECT_FALSE(placement_from_string("single-gpu"));
  EXPECT_FALSE(placement_from_string(""));
}

TEST(Placement, SharedGpuPutsEveryRankOnDeviceZero) {
  for (int local_rank : {0, 1, 3}) EXPECT_EQ(device_for_rank(Placement::SharedGpu, local_rank, 4, 1).device, 0);
}

TEST(Placement, GpuPerRankNeedsAGpuForEveryLocalRank) {
  EXPECT_EQ(device_for_rank(Placement::GpuPerRank, 2, 4, 4).device, 2);
  const DeviceChoice short_of_gpus = device_for_rank(Placement::GpuPerRank, 0, 4, 1);
  EXPECT_EQ(short_of_gpus.device, -1);
  EXPECT_NE(short_of_gpus.error.find("shared-gpu"), std::string::npos) << short_of_gpus.error;
  EXPECT_NE(device_for_rank(Placement::SharedGpu, 0, 4, 0).error, "");
}

TEST(Placement, SharedGpuClaimsAHostPerRankUnlessTheUserChoseOne) {
  unsetenv("NCCL_HOSTID");
  EXPECT_EQ(claim_nccl_host(Placement::GpuPerRank, 3), "");
  EXPECT_EQ(std::getenv("NCCL_HOSTID"), nullptr);
  EXPECT_EQ(claim_nccl_host(Placement::SharedGpu, 3), "hangbench-rank3");
  EXPECT_STREQ(std::getenv("NCCL_HOSTID"), "hangbench-rank3");
  setenv("NCCL_HOSTID", "users-own", 1);
  EXPECT_EQ(claim_nccl_host(Placement::SharedGpu, 1), "users-own");
  unsetenv("NCCL_HOSTID");
}

// Lines as NCCL 2.28 writes them with NCCL_DEBUG=INFO (four ranks on one H200).
TEST(NcclDebugLog, TransportsAreReadFromChannelLines) {
  std::istringstream log(
      "gpu:101:101 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
      "gpu:101:205 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n"
      "gpu:101:205 [0] NCCL INFO Channel 01/0 : 3[0] -> 0[0] [receive] via NET/Socket/0\n"
      "gpu:101:206 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[0] [send] via NET/Socket/0/Shared\n"
      "gpu:101:101 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n"
      "gpu:101:101 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0\n");
  EXPECT_EQ(nccl_transports(log), (std::set<std::string>{"NET/Socket/0", "NET/Socket/0/Shared"}));
}

TEST(NcclDebugLog, NoChannelLinesMeansUnknown) {
  std::istringstream log("gpu:1:1 [0] NCCL INFO Bootstrap: Using eth0:192.0.2.2<0>\n");
  const auto transports = nccl_transports(log);
  EXPECT_TRUE(transports.empty());
  EXPECT_EQ(join_transports(transports), "unknown");
  EXPECT_EQ(join_transports({"P2P/CUMEM", "SHM/direct/direct"}), "P2P/CUMEM SHM/direct/direct");
}

TEST(NcclDebugLog, RoutedToTheTrialOnlyWhenAskedAndNotElsewhere) {
  unsetenv("NCCL_DEBUG_FILE");
  unsetenv("NCCL_DEBUG");
  EXPECT_EQ(route_nccl_debug_log("/t", 2), "");
  setenv("NCCL_DEBUG", "INFO", 1);
  EXPECT_EQ(route_nccl_debug_log("/t", 2), "/t/nccl-debug.rank2.log");
  EXPECT_STREQ(std::getenv("NCCL_DEBUG_FILE"), "/t/nccl-debug.rank2.log");
  EXPECT_EQ(route_nccl_debug_log("/t", 3), "");  // already routed: the first choice stays
  unsetenv("NCCL_DEBUG_FILE");
  unsetenv("NCCL_DEBUG");
}

}  // namespace
}  // namespace hangbench::workload
