// The CI version of the default matrix (workloads/socket_teardown/matrix-ci.toml)
// through `hangbench run`: the verdicts, and the hang evidence naming the forked
// helper as the holder of the connection's client end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kMatrix = std::string(HB_SOURCE_DIR) + "/workloads/socket_teardown/matrix-ci.toml";

// The JSON report under `dir` (schema hangbench.run/1), or null.
json find_json_report(const fs::path& dir) {
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    json doc = json::parse(in, nullptr, false);
    if (!doc.is_discarded() && doc.is_object() && doc.value("schema", "") == "hangbench.run/1") return doc;
  }
  return nullptr;
}

class SocketTeardownMatrix : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = fs::temp_directory_path() / ("socket_teardown_matrix_" + std::to_string(::getpid()));
    fs::remove_all(out_);
    std::string command = "HANGBENCH_WORKLOADS_DIR='" + std::string(HB_BINARY_DIR) + "/workloads' '" + kHangbench +
                          "' run --matrix '" + kMatrix + "' --out '" + out_.string() + "' --format json > '" +
                          out_.string() + ".log' 2>&1";
    int status = std::system(command.c_str());
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    report_ = find_json_report(out_);
  }
  static void TearDownTestSuite() {
    fs::remove_all(out_);
    fs::remove(out_.string() + ".log");
  }
  static std::string log_text() {
    std::ifstream in(out_.string() + ".log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  static inline fs::path out_;
  static inline int exit_code_ = -1;
  static inline json report_;
};

TEST_F(SocketTeardownMatrix, EveryExpectationIsConfirmed) {
  EXPECT_EQ(exit_code_, 0) << log_text();
  ASSERT_TRUE(report_.is_object()) << "no JSON report under " << out_ << "\n" << log_text();
  ASSERT_EQ(report_["cells"].size(), 8u);
  for (const auto& cell : report_["cells"]) {
    const auto& params = cell["params"];
    bool hang_cell = params["close"] == "close-only" && params["gate"] == "after";
    SCOPED_TRACE(cell["id"].get<std::string>());
    EXPECT_EQ(cell["expect"], hang_cell ? "hang" : "no-hang");
    EXPECT_EQ(cell["verdict"], "CONFIRMED") << cell["verdict_reason"];
    EXPECT_EQ(cell["n"], 7);
    EXPECT_EQ(cell["hangs"], hang_cell ? 7 : 0);
    EXPECT_EQ(cell["infra"], 0);
  }
}

TEST_F(SocketTeardownMatrix, HangsWaitAfterTeardownBeganAndNameTheHelperAsHolder) {
  ASSERT_TRUE(report_.is_object()) << log_text();
  int hung = 0;
  for (const auto& trial : report_["trials"]) {
    if (trial["outcome"] != "HANG") continue;
    ++hung;
    SCOPED_TRACE(trial["cell_id"].get<std::string>() + " trial " + std::to_string(trial["index"].get<int>()));
    EXPECT_EQ(trial["hung_phase"], "teardown_begin");
    const auto& metrics = trial["metrics"];
    ASSERT_TRUE(metrics.contains("helper_pid")) << metrics.dump();
    const std::string helper = std::to_string(metrics["helper_pid"].get<long>());
    const std::string summary = trial["evidence_summary"].get<std::string>();
    EXPECT_NE(summary.find("pid " + helper), std::string::npos)
        << "the evidence does not name helper pid " << helper << ": " << summary;
    EXPECT_TRUE(trial["survivors"].empty()) << "processes outlived the cleanup";
  }
  EXPECT_EQ(hung, 14);
}

TEST_F(SocketTeardownMatrix, TheShutdownFixIsSignificant) {
  ASSERT_TRUE(report_.is_object()) << log_text();
  ASSERT_EQ(report_["comparisons"].size(), 1u);
  const auto& c = report_["comparisons"][0];
  EXPECT_EQ(c["a_hangs"], 14);
  EXPECT_EQ(c["b_hangs"], 0);
  EXPECT_LT(c["p_two_sided"].get<double>(), 0.01);
}

}  // namespace
