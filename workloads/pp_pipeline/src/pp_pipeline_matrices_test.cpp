// The PP matrices parse with the harness's loader and say what issue 26 asks of
// PP4: real NCCL between four mpirun ranks, placement and MPI transport as axes,
// hangs expected exactly where the cycle model says the pipeline deadlocks.
#include <gtest/gtest.h>

#include <algorithm>

#include "cycle_model.hpp"
#include "hangbench/matrix.hpp"

using namespace hangbench;

namespace {

Matrix load(const char* name) {
  MatrixEnvironment env;
  env.workloads_dir = "/w";
  env.nccl_cache = "/nccl";
  return load_matrix(std::string(HB_SOURCE_DIR) + "/workloads/pp_pipeline/" + name, env);
}

bool has_arg(const Cell& c, const std::string& arg) {
  return std::find(c.argv.begin(), c.argv.end(), arg) != c.argv.end();
}

}  // namespace

TEST(PpMatrices, Pp4RunsFourNcclStagesUnderMpirunOnEitherPlacement) {
  Matrix m = load("matrix-pp4.toml");
  EXPECT_EQ(m.cells.size(), 2u * 2u * 3u * 2u * 2u);
  for (const Cell& c : m.cells) {
    EXPECT_EQ(c.launcher.kind, LauncherKind::Mpirun) << c.id;
    EXPECT_EQ(c.launcher.ranks, 4) << c.id;
    EXPECT_TRUE(has_arg(c, "--link=nccl")) << c.id;
    EXPECT_TRUE(has_arg(c, "--placement=" + c.params.at("placement"))) << c.id;
    EXPECT_GE(c.trials, 20) << c.id;
    EXPECT_EQ(c.env.at("OMPI_MCA_pml"), c.params.at("mpi") == "ucx-tcp" ? "ucx" : "ob1") << c.id;
  }
}

TEST(PpMatrices, Pp4ExpectsAHangExactlyWhereTheCycleModelDeadlocks) {
  Matrix m = load("matrix-pp4.toml");
  for (const Cell& c : m.cells) {
    const auto progress = *pp::progress_source_from_string(c.params.at("progress"));
    const auto loading = pp::module_loading_from_env(c.params.at("loading").c_str());
    const auto cold = *pp::cold_call_from_string(c.params.at("cold_call"));
    const bool deadlocks = !pp::simulate_pipeline({4, 4}, progress, loading, cold).completed;
    EXPECT_EQ(c.expect, deadlocks ? Expectation::Hang : Expectation::NoHang) << c.id;
  }
}

TEST(PpMatrices, Pp4ComparesNativeAgainstNoneAndPumpAndEagerAgainstLazyOnOneGpu) {
  Matrix m = load("matrix-pp4.toml");
  auto compares = [&](const std::string& key, const std::string& a, const std::string& b) {
    return std::any_of(m.comparisons.begin(), m.comparisons.end(), [&](const Comparison& c) {
      return c.a.at("placement") == "shared-gpu" && c.a.at(key) == a && c.b.at(key) == b;
    });
  };
  EXPECT_TRUE(compares("progress", "native", "none"));
  EXPECT_TRUE(compares("progress", "native", "pump"));
  EXPECT_TRUE(compares("loading", "EAGER", "LAZY"));
}

TEST(PpMatrices, OneGpuHostPageMatrixStillUsesTheHostPage) {
  Matrix m = load("matrix-1gpu.toml");
  for (const Cell& c : m.cells) EXPECT_TRUE(has_arg(c, "--single-gpu")) << c.id;
}
