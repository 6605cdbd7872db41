// `hangbench report --dest DIR`: the folder is made, and every link of the
// re-rendered HTML still reaches the trial folders that stay in the run folder.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace fs = std::filesystem;

namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kSmall = std::string(HB_FIXTURES_DIR) + "/matrix/small.toml";

int hangbench(const std::string& args, std::string* text) {
  FILE* pipe = ::popen((kHangbench + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) text->append(chunk, got);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every local href of an HTML page, percent-decoded ("%3D" is '=' in cell ids).
std::vector<std::string> local_links(const std::string& html) {
  std::vector<std::string> out;
  static const std::regex href("href=\"([^\"#]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it) {
    std::string raw = (*it)[1], decoded;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '%' && i + 2 < raw.size()) {
        decoded += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        decoded += raw[i];
      }
    }
    if (decoded.find("://") == std::string::npos) out.push_back(decoded);
  }
  return out;
}

TEST(ReportDest, MakesTheFolderAndKeepsEveryEvidenceLinkWorking) {
  const fs::path root = fs::temp_directory_path() / ("hb_report_dest_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path out = root / "run";
  std::string text;
  int rc = hangbench("run --matrix " + kSmall + " --out " + out.string() + " --progress none", &text);
  ASSERT_TRUE(rc == 0 || rc == 1) << text;
  const std::vector<std::string> in_run = local_links(slurp(out / "report.html"));
  ASSERT_FALSE(in_run.empty()) << "the hung trials link their evidence";

  const fs::path dest = root / "site" / "nightly" / "small";  // none of it exists yet
  text.clear();
  EXPECT_EQ(hangbench("report --out " + out.string() + " --format html,md --dest " + dest.string(), &text), rc) << text;
  const std::string html = slurp(dest / "report.html");
  const std::vector<std::string> links = local_links(html);
  EXPECT_EQ(links.size(), in_run.size()) << html;
  for (const auto& link : links) {
    EXPECT_TRUE(fs::exists(dest / link)) << link << " does not resolve from " << dest;
    EXPECT_EQ(link.rfind("../../../run/", 0), 0u) << link;
  }
  EXPECT_NE(slurp(dest / "report.md").find("../../../run/"), std::string::npos);
  fs::remove_all(root);
}

TEST(ReportDest, AFileInTheWayIsAnInfrastructureError) {
  const fs::path root = fs::temp_directory_path() / ("hb_report_dest_file_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string text;
  int rc =
      hangbench("run --matrix " + kSmall + " --trials 1 --out " + (root / "run").string() + " --progress none", &text);
  ASSERT_TRUE(rc == 0 || rc == 1) << text;
  std::ofstream(root / "file") << "x";
  text.clear();
  EXPECT_EQ(hangbench("report --out " + (root / "run").string() + " --dest " + (root / "file").string(), &text), 3)
      << text;
  EXPECT_NE(text.find("--dest"), std::string::npos) << text;
  fs::remove_all(root);
}

}  // namespace
