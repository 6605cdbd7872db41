// ddp_abort's command line and launcher environment (workloads/ddp_abort/options.*).
// Linked with ddp_abort_support by workloads/ddp_abort/CMakeLists.txt.
#include <gtest/gtest.h>

#include "options.hpp"

using namespace hangbench::ddp;

namespace {
ParseOutcome parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  return parse_options(args, env);
}
}  // namespace

TEST(DdpAbortOptions, DirectBackendWithLibraryParsesEveryAxis) {
  auto out = parse({"--backend=direct", "--nccl-lib", "/x/libnccl.so.2", "--teardown=watchdog", "--workers=spawn",
                    "--pool=per-epoch", "--num-workers=3", "--epochs=5", "--steps=7", "--collective-timeout=0.5"});
  ASSERT_TRUE(out.options) << out.message;
  const Options& o = *out.options;
  EXPECT_EQ(o.backend, Backend::Direct);
  EXPECT_EQ(o.nccl_lib, "/x/libnccl.so.2");
  EXPECT_EQ(o.teardown, Teardown::Watchdog);
  EXPECT_EQ(o.workers, WorkerGate::Spawn);
  EXPECT_EQ(o.pool, PoolPolicy::PerEpoch);
  EXPECT_EQ(o.num_workers, 3);
  EXPECT_EQ(o.epochs, 5);
  EXPECT_EQ(o.steps_per_epoch, 7);
  EXPECT_DOUBLE_EQ(o.collective_timeout_s, 0.5);
}

TEST(DdpAbortOptions, C10dNeedsNoLibraryAndDefaultsToExitAbortWithWorkersAfter) {
  auto out = parse({"--backend=c10d"});
  ASSERT_TRUE(out.options) << out.message;
  EXPECT_EQ(out.options->backend, Backend::C10d);
  EXPECT_EQ(out.options->teardown, Teardown::Exit);
  EXPECT_EQ(out.options->workers, WorkerGate::After);
  EXPECT_EQ(out.options->pool, PoolPolicy::Persistent);
}

TEST(DdpAbortOptions, DirectWithoutLibraryIsAUsageError) {
  auto out = parse({"--backend=direct"});
  EXPECT_FALSE(out.options);
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.message.find("--nccl-lib"), std::string::npos) << out.message;
}

TEST(DdpAbortOptions, UnknownAxisValueIsAUsageErrorNamingTheOption) {
  auto out = parse({"--backend=c10d", "--teardown=explode"});
  EXPECT_FALSE(out.options);
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.message.find("--teardown"), std::string::npos) << out.message;
}

TEST(DdpAbortOptions, UnknownFlagIsAUsageError) {
  auto out = parse({"--backend=c10d", "--frobnicate"});
  EXPECT_FALSE(out.options);
  EXPECT_EQ(out.exit_code, 2);
}

TEST(DdpAbortOptions, PerEpochPoolCannotForkBeforeInit) {
  auto out = parse({"--backend=c10d", "--pool=per-epoch", "--workers=before"});
  EXPECT_FALSE(out.options);
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.message.find("per-epoch"), std::string::npos);
}

TEST(DdpAbortOptions, OutOfRangeNumbersAreRejected) {
  EXPECT_EQ(parse({"--backend=c10d", "--num-workers=0"}).exit_code, 2);
  EXPECT_EQ(parse({"--backend=c10d", "--collective-timeout=0"}).exit_code, 2);
  EXPECT_EQ(parse({"--backend=c10d", "--steps=abc"}).exit_code, 2);
}

TEST(DdpAbortOptions, HelpIsNotAnError) {
  auto out = parse({"--help"});
  EXPECT_FALSE(out.options);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_NE(out.message.find("--teardown"), std::string::npos);
}

TEST(DdpAbortOptions, RendezvousFolderDefaultsToTheTrialFolder) {
  auto out = parse({"--backend=c10d"}, {{"HANGBENCH_TRIAL_DIR", "/runs/t7"}});
  ASSERT_TRUE(out.options);
  EXPECT_EQ(out.options->rendezvous_dir, "/runs/t7");
  auto explicit_dir = parse({"--backend=c10d", "--rendezvous-dir=/shared"}, {{"HANGBENCH_TRIAL_DIR", "/runs/t7"}});
  EXPECT_EQ(explicit_dir.options->rendezvous_dir, "/shared");
}

TEST(DdpAbortWorld, AloneIsRankZeroOfOne) {
  World w = world_from_env({});
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
  EXPECT_EQ(w.local_rank, 0);
}

TEST(DdpAbortWorld, OpenMpiVariablesWinOverTorchrunOnes) {
  World w = world_from_env({{"OMPI_COMM_WORLD_RANK", "3"},
                            {"OMPI_COMM_WORLD_SIZE", "4"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                            {"RANK", "0"},
                            {"WORLD_SIZE", "1"}});
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.size, 4);
  EXPECT_EQ(w.local_rank, 1);
}

TEST(DdpAbortWorld, TorchrunVariablesAreRead) {
  World w = world_from_env({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}});
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.size, 2);
  EXPECT_EQ(w.local_rank, 1);
}

TEST(DdpAbortWorld, LocalSizeComesFromTheLauncherOrFromTheLocalRank) {
  EXPECT_EQ(world_from_env({{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}}).local_size, 4);
  EXPECT_EQ(world_from_env({{"LOCAL_WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}}).local_size, 2);
  EXPECT_EQ(world_from_env({{"LOCAL_RANK", "3"}}).local_size, 4);  // at least one past the local rank
  EXPECT_EQ(world_from_env({}).local_size, 1);
}

TEST(DdpAbortOptions, PlacementIsReadAndDefaultsToAGpuPerRank) {
  EXPECT_EQ(parse({"--backend=c10d"}).options->placement, hangbench::workload::Placement::GpuPerRank);
  EXPECT_EQ(parse({"--backend=c10d", "--placement=shared-gpu"}).options->placement,
            hangbench::workload::Placement::SharedGpu);
  const ParseOutcome bad = parse({"--backend=c10d", "--placement=one-gpu"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.message.find("one-gpu"), std::string::npos) << bad.message;
}

TEST(DdpAbortWorld, RankOutsideTheWorldIsRejected) {
  EXPECT_THROW(world_from_env({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), std::invalid_argument);
  EXPECT_THROW(world_from_env({{"RANK", "x"}}), std::invalid_argument);
}

TEST(DdpAbortOptions, WorkerRanksDefaultToEveryRank) {
  auto out = parse({"--backend=c10d"});
  ASSERT_TRUE(out.options) << out.message;
  EXPECT_TRUE(rank_starts_workers(*out.options, 0));
  EXPECT_TRUE(rank_starts_workers(*out.options, 3));
}

TEST(DdpAbortOptions, WorkerRanksListLimitsWhichRanksStartWorkers) {
  auto out = parse({"--backend=c10d", "--worker-ranks=0,2"});
  ASSERT_TRUE(out.options) << out.message;
  EXPECT_TRUE(rank_starts_workers(*out.options, 0));
  EXPECT_FALSE(rank_starts_workers(*out.options, 1));
  EXPECT_TRUE(rank_starts_workers(*out.options, 2));
  EXPECT_FALSE(rank_starts_workers(*out.options, 3));
}

TEST(DdpAbortOptions, WorkerRanksThatAreNotRanksAreAUsageErrorNamingTheOption) {
  for (const char* bad : {"--worker-ranks=one", "--worker-ranks=0,", "--worker-ranks=-1", "--worker-ranks="}) {
    auto out = parse({"--backend=c10d", bad});
    EXPECT_FALSE(out.options) << bad;
    EXPECT_EQ(out.exit_code, 2) << bad;
    EXPECT_NE(out.message.find("--worker-ranks"), std::string::npos) << bad << ": " << out.message;
  }
}

TEST(DdpAbortOptions, StallDefaultsToAutoAndResolvesByWorldSize) {
  auto out = parse({"--backend=c10d"});
  ASSERT_TRUE(out.options) << out.message;
  EXPECT_EQ(out.options->stall, Stall::Auto);
  EXPECT_EQ(resolve_stall(Stall::Auto, 1), Stall::Gate);  // no peer to miss
  EXPECT_EQ(resolve_stall(Stall::Auto, 2), Stall::MissingRank);
  EXPECT_EQ(resolve_stall(Stall::Gate, 4), Stall::Gate);  // an explicit choice stands
  EXPECT_EQ(resolve_stall(Stall::MissingRank, 1), Stall::MissingRank);
}

TEST(DdpAbortOptions, StallTakesItsWordsAndRefusesOthers) {
  auto gate = parse({"--backend=c10d", "--stall=gate"});
  ASSERT_TRUE(gate.options) << gate.message;
  EXPECT_EQ(gate.options->stall, Stall::Gate);
  auto missing = parse({"--backend=c10d", "--stall=missing-rank"});
  ASSERT_TRUE(missing.options) << missing.message;
  EXPECT_EQ(missing.options->stall, Stall::MissingRank);
  EXPECT_EQ(to_string(Stall::MissingRank), "missing-rank");
  auto bad = parse({"--backend=c10d", "--stall=sometimes"});
  EXPECT_FALSE(bad.options);
}
