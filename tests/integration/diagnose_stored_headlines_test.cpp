// Every hang diagnosis stored in results/ (the evidence of real GPU runs), judged again by
// this hangbench: its headline is at most five lines and 600 characters (issue 38), names
// who waits, and says what to do when the catalog or the pattern knows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

using ::testing::StartsWith;

namespace {

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 65536> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

std::size_t characters(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_stored_diagnosis(const std::filesystem::path& path) {
  if (path.extension() != ".json" || std::filesystem::file_size(path) > (64u << 20)) return false;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find("\"processes\"") != std::string::npos;
}

}  // namespace

TEST(StoredHeadlines, EveryStoredHangFitsFiveLinesAndSixHundredCharacters) {
  const std::string binary = std::string(HB_BINARY_DIR) + "/harness/hangbench";
  int judged = 0, with_headline = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(HB_SOURCE_DIR) + "/results")) {
    if (!entry.is_regular_file() || !is_stored_diagnosis(entry.path())) continue;
    const std::string text = run(binary + " diagnose --json --from '" + entry.path().string() + "' 2>/dev/null");
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.contains("headline")) continue;  // not evidence diagnose reads
    ++judged;
    const auto lines = j["headline"].get<std::vector<std::string>>();
    if (lines.empty()) continue;
    ++with_headline;
    std::size_t total = lines.size() - 1;
    for (const auto& line : lines) total += characters(line);
    SCOPED_TRACE(entry.path().string());
    EXPECT_LE(lines.size(), 5u);
    EXPECT_LE(total, 600u);
    EXPECT_THAT(lines[0], StartsWith("HANG     "));
    EXPECT_THAT(lines[1], StartsWith("WAITS    "));
  }
  // results/ holds 54 stored diagnoses, 18 of them hung (2026-12-06): a test that found none checked nothing.
  EXPECT_GE(judged, 20);
  EXPECT_GE(with_headline, 10);
}
