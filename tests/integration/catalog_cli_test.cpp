// `hangbench catalog` end to end: the built binary, run from a folder outside the
// checkout with no HANGBENCH_SOURCE_DIR (the catalog is embedded), lists and shows
// entries, prints JSON, and refuses an unknown id with exit 2 and the known ids.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

int hangbench_away(const std::string& args, std::string* out) {
  const std::string command =
      "cd / && env -u HANGBENCH_SOURCE_DIR " + std::string(HB_BINARY_DIR) + "/harness/hangbench " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) out->append(chunk, got);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CatalogCli, ListsEveryEntryWithItsMeasuredRangeAwayFromTheCheckout) {
  std::string out;
  ASSERT_EQ(hangbench_away("catalog list", &out), 0) << out;
  EXPECT_NE(out.find("nccl-socket-close-alias\n"), std::string::npos) << out;
  EXPECT_NE(out.find("measured: vulnerable 2.16.2 to 2.17.1 (3 releases), fixed from 2.18.1"), std::string::npos)
      << out;
  EXPECT_NE(out.find("mpi-progress-gil\n"), std::string::npos) << out;
}

TEST(CatalogCli, ShowPrintsEachReleaseAndJson) {
  std::string text;
  ASSERT_EQ(hangbench_away("catalog show nccl-socket-close-alias", &text), 0) << text;
  EXPECT_NE(text.find("2.17.1         vulnerable      7/7 hung, p vs fixed reference 5.8e-04"), std::string::npos)
      << text;
  EXPECT_NE(text.find("static check: shutdown() in ncclSocketClose"), std::string::npos) << text;
  std::string json;
  ASSERT_EQ(hangbench_away("catalog show nccl-socket-close-alias --json", &json), 0) << json;
  const auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["schema"], "hangbench.catalog/1");
  EXPECT_EQ(j["measured"]["fixed_from"], "2.18.1");
  EXPECT_EQ(j["diagnose"]["rules"][0], "nccl-descriptor-alias");
}

TEST(CatalogCli, AnUnknownIdIsAUsageErrorNamingTheKnownOnes) {
  std::string out;
  EXPECT_EQ(hangbench_away("catalog show no-such-hang", &out), 2) << out;
  EXPECT_NE(out.find("no entry 'no-such-hang'"), std::string::npos) << out;
  EXPECT_NE(out.find("known: cuda-lazy-load-gil"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(hangbench_away("sweep --hang no-such-hang /nonexistent.so", &out), 2) << out;
  out.clear();
  EXPECT_EQ(hangbench_away("catalog check --hang no-such-hang /nonexistent.so", &out), 2) << out;
  EXPECT_NE(out.find("no entry 'no-such-hang'"), std::string::npos) << out;
}

// `catalog check` reads bytes only; a file that is no NCCL library is named, with exit 2.
TEST(CatalogCli, CheckNamesAFileThatIsNoNcclLibrary) {
  std::string out;
  EXPECT_EQ(hangbench_away("catalog check /etc/passwd", &out), 2) << out;
  EXPECT_NE(out.find("/etc/passwd: "), std::string::npos) << out;
  EXPECT_NE(out.find("no NCCL library"), std::string::npos) << out;
}

}  // namespace
