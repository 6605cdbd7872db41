// The ddp_abort matrices parse with the harness's matrix loader and say what
// issue 9 asks: 4 NCCL builds x 3 teardowns x 3 worker gates x 2 backends, hangs
// expected only for the builds without shutdown in abort cells with workers
// forked after init, the chosen NCCL preloaded for c10d only.
#include <gtest/gtest.h>

#include <algorithm>

#include "hangbench/matrix.hpp"

using namespace hangbench;

namespace {
Matrix load(const char* name) {
  MatrixEnvironment env;
  env.workloads_dir = "/w";
  env.nccl_cache = "/nccl";
  return load_matrix(std::string(HB_SOURCE_DIR) + "/workloads/ddp_abort/" + name, env);
}

bool without_shutdown(const std::string& nccl) { return nccl == "2.17.1" || nccl == "2.18.1-noshutdown"; }
}  // namespace

TEST(DdpAbortMatrices, H200MatrixHasEveryCellOfTheEvidenceTable) {
  Matrix m = load("matrix-h200.toml");
  EXPECT_EQ(m.cells.size(), 4u * 3u * 3u * 2u);
  for (const Cell& c : m.cells) EXPECT_GE(c.trials, 20) << c.id;
}

TEST(DdpAbortMatrices, H200ExpectsHangsExactlyWhereTheProbeSawThem) {
  Matrix m = load("matrix-h200.toml");
  int hang_cells = 0;
  for (const Cell& c : m.cells) {
    const auto& p = c.params;
    const bool should_hang =
        without_shutdown(p.at("nccl")) && p.at("teardown") != "destroy" && p.at("workers") == "after";
    EXPECT_EQ(c.expect, should_hang ? Expectation::Hang : Expectation::NoHang) << c.id;
    hang_cells += should_hang;
  }
  EXPECT_EQ(hang_cells, 2 * 2 * 2);
}

TEST(DdpAbortMatrices, C10dCellsPreloadTheChosenLibraryAndTheShimDirectCellsDoNot) {
  Matrix m = load("matrix-h200.toml");
  for (const Cell& c : m.cells) {
    const std::string lib = "/nccl/" + c.params.at("nccl") + "/lib/libnccl.so.2";
    EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "--nccl-lib=" + lib), c.argv.end()) << c.id;
    EXPECT_EQ(c.argv.front(), "/w/ddp_abort/ddp_abort");
    if (c.params.at("backend") == "c10d") {
      ASSERT_TRUE(c.env.count("LD_PRELOAD")) << c.id;
      EXPECT_EQ(c.env.at("LD_PRELOAD"), lib + " /nccl/shim/libnccl_compat_shim.so");
    } else {
      EXPECT_EQ(c.env.count("LD_PRELOAD"), 0u) << c.id;
    }
  }
}

TEST(DdpAbortMatrices, H200ComparesTheBuildsAndAbortAgainstDestroy) {
  Matrix m = load("matrix-h200.toml");
  auto has = [&](const std::string& a_nccl, const std::string& b_nccl, const std::string& a_td,
                 const std::string& b_td) {
    return std::any_of(m.comparisons.begin(), m.comparisons.end(), [&](const Comparison& c) {
      return c.a.at("nccl") == a_nccl && c.b.at("nccl") == b_nccl && c.a.at("teardown") == a_td &&
             c.b.at("teardown") == b_td;
    });
  };
  EXPECT_TRUE(has("2.17.1", "2.17.1+backport", "exit", "exit"));
  EXPECT_TRUE(has("2.18.1-noshutdown", "2.18.1", "exit", "exit"));
  EXPECT_TRUE(has("2.17.1", "2.17.1", "exit", "destroy"));
}

TEST(DdpAbortMatrices, SmokeMatrixIsSmall) {
  Matrix m = load("matrix-smoke.toml");
  EXPECT_LE(m.cells.size(), 16u);
  EXPECT_GE(m.cells.size(), 4u);
  for (const Cell& c : m.cells) EXPECT_EQ(c.trials, 2) << c.id;
}

TEST(DdpAbortMatrices, SpawnMatrixExpectsHangsOnlyFromForkedWorkers) {
  Matrix m = load("matrix-spawn.toml");
  EXPECT_EQ(m.cells.size(), 2u * 2u * 2u * 2u);
  for (const Cell& c : m.cells) {
    EXPECT_TRUE(without_shutdown(c.params.at("nccl"))) << c.id;
    EXPECT_EQ(c.expect, c.params.at("workers") == "after" ? Expectation::Hang : Expectation::NoHang) << c.id;
    EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "--workers=" + c.params.at("workers")), c.argv.end()) << c.id;
    EXPECT_EQ(c.env.count("LD_PRELOAD"), c.params.at("backend") == "c10d" ? 1u : 0u) << c.id;
    EXPECT_EQ(c.phase_timeouts_s.at("teardown_begin"), 5.0) << c.id;
  }
  EXPECT_EQ(m.comparisons.size(), 3u);
}

// Issue 26: world size 2 and 4 as an axis, placement as an axis, every rank a
// launcher rank (mpirun -np {ranks}).
TEST(DdpAbortMatrices, RanksMatrixRunsEachWorldSizeUnderMpirunWithItsPlacement) {
  Matrix m = load("matrix-ranks.toml");
  // Every rank with workers: ranks x placement x builds x teardowns; only rank 0 with
  // workers: world 4, abort at exit, the 2.17.1 pair, on both placements.
  EXPECT_EQ(m.cells.size(), 2u * 2u * 4u * 2u + 2u * 2u);
  for (const Cell& c : m.cells) {
    EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "--worker-ranks=" + c.params.at("worker_ranks")), c.argv.end());
    if (c.params.at("worker_ranks") != "all") {
      EXPECT_EQ(c.params.at("ranks"), "4") << c.id;
      EXPECT_EQ(c.params.at("teardown"), "exit") << c.id;
      EXPECT_EQ(c.params.at("nccl").rfind("2.17.1", 0), 0u) << c.id;
    }
    EXPECT_EQ(c.launcher.kind, LauncherKind::Mpirun) << c.id;
    EXPECT_EQ(std::to_string(c.launcher.ranks), c.params.at("ranks")) << c.id;
    EXPECT_NE(std::find(c.argv.begin(), c.argv.end(), "--placement=" + c.params.at("placement")), c.argv.end());
    EXPECT_EQ(c.expect, without_shutdown(c.params.at("nccl")) ? Expectation::Hang : Expectation::NoHang) << c.id;
    EXPECT_GE(c.trials, 20) << c.id;
    EXPECT_EQ(c.env.at("NCCL_DEBUG"), "INFO") << c.id;
  }
  // The one-GPU run keeps half of the cells, the multi-GPU run the other half.
  Matrix shared = load("matrix-ranks.toml");
  filter_cells(shared, {{"placement", "shared-gpu"}});
  EXPECT_EQ(shared.cells.size(), m.cells.size() / 2);
}

TEST(DdpAbortMatrices, RanksMatrixComparesEachPairAtWorldFourOnBothPlacements) {
  Matrix m = load("matrix-ranks.toml");
  auto compares = [&](const std::string& placement, const std::string& a, const std::string& b) {
    return std::any_of(m.comparisons.begin(), m.comparisons.end(), [&](const Comparison& c) {
      return c.a.count("ranks") && c.a.at("ranks") == "4" && c.a.at("placement") == placement && c.a.at("nccl") == a &&
             c.b.at("nccl") == b;
    });
  };
  for (const std::string placement : {"shared-gpu", "gpu-per-rank"}) {
    EXPECT_TRUE(compares(placement, "2.17.1", "2.17.1+backport")) << placement;
    EXPECT_TRUE(compares(placement, "2.18.1-noshutdown", "2.18.1")) << placement;
  }
}
