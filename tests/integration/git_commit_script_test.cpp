// cmake/git_commit.cmake, the build step that names a binary's commit in its
// provenance: run against a scratch git repository through commits and edits.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hangbench/provenance.hpp"

namespace {

namespace fs = std::filesystem;

class GitCommitScript : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = fs::temp_directory_path() / ("hb_git_commit_" + std::to_string(::getpid()));
    fs::remove_all(repo_);
    fs::create_directories(repo_);
    sh("git init -q . && git config user.email t@example.invalid && git config "
       "user.name t");
  }
  void TearDown() override { fs::remove_all(repo_); }

  int sh(const std::string& command) {
    return std::system(("cd '" + repo_.string() + "' && " + command + " > /dev/null 2>&1").c_str());
  }
  std::string head() {
    std::system(("cd '" + repo_.string() + "' && git rev-parse --short=12 HEAD > head.txt").c_str());
    std::ifstream in(repo_ / "head.txt");
    std::string sha;
    in >> sha;
    fs::remove(repo_ / "head.txt");
    return sha;
  }
  // The first 12 hex digits of the SHA-256 of the diff against HEAD, as the
  // script's comment says to compute it by hand.
  std::string diff_hash() {
    std::system(("cd '" + repo_.string() +
                 "' && git -c core.quotePath=true diff --no-ext-diff --no-textconv --no-color --no-renames --binary "
                 "--src-prefix=a/ --dst-prefix=b/ HEAD -- | sha256sum | cut -c1-12 > diff_hash.txt")
                    .c_str());
    std::ifstream in(repo_ / "diff_hash.txt");  // untracked: not in the diff
    std::string hash;
    in >> hash;
    fs::remove(repo_ / "diff_hash.txt");
    return hash;
  }
  void commit(const std::string& text) {
    std::ofstream(repo_ / "file.txt") << text;
    ASSERT_EQ(sh("git add file.txt && git commit -q -m c"), 0);
  }
  // Runs the script; returns the generated file's text.
  std::string generate() {
    std::string command = "cmake -DSOURCE_DIR='" + repo_.string() + "' -DOUT='" + out().string() + "' -P '" +
                          std::string(HB_SOURCE_DIR) + "/cmake/git_commit.cmake'";
    EXPECT_EQ(sh(command), 0);
    std::ifstream in(out());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path out() const { return repo_ / "generated.cpp"; }

  fs::path repo_;
};

TEST_F(GitCommitScript, FollowsEveryCommitAndMarksATreeThatDiffers) {
  commit("one");
  std::string first = head();
  EXPECT_NE(generate().find("return \"" + first + "\";"), std::string::npos);
  commit("two");  // a new commit in an already-configured tree: the stale value
                  // of before
  std::string second = head();
  ASSERT_NE(first, second);
  EXPECT_NE(generate().find("return \"" + second + "\";"), std::string::npos);
  std::ofstream(repo_ / "file.txt") << "edited";
  EXPECT_NE(generate().find("return \"" + second + "-dirty+diff." + diff_hash() + "\";"), std::string::npos);
}

// A tree that differs names the commit and a hash of the diff against it, the one
// the script's comment gives for checking by hand; two edits of one commit differ,
// and undoing the edit gives the commit alone again.
TEST_F(GitCommitScript, ADirtyTreeNamesTheHashOfItsDiff) {
  commit("one");
  std::string sha = head();
  std::ofstream(repo_ / "file.txt") << "first edit";
  std::string first = diff_hash();
  ASSERT_EQ(first.size(), 12u);
  EXPECT_NE(generate().find("return \"" + sha + "-dirty+diff." + first + "\";"), std::string::npos);
  std::ofstream(repo_ / "file.txt") << "second edit";
  std::string second = diff_hash();
  ASSERT_NE(first, second);
  EXPECT_NE(generate().find("return \"" + sha + "-dirty+diff." + second + "\";"), std::string::npos);
  // The user's diff settings do not change the hash.
  ASSERT_EQ(sh("git config diff.noprefix true && git config diff.mnemonicPrefix true && git config color.diff always"),
            0);
  EXPECT_NE(generate().find("return \"" + sha + "-dirty+diff." + second + "\";"), std::string::npos);
  std::ofstream(repo_ / "file.txt") << "one";
  EXPECT_NE(generate().find("return \"" + sha + "\";"), std::string::npos);
}

TEST_F(GitCommitScript, UnchangedCommitLeavesTheFileAlone) {
  commit("one");
  generate();
  fs::last_write_time(out(), fs::file_time_type::clock::now() - std::chrono::hours(1));
  auto before = fs::last_write_time(out());
  generate();
  EXPECT_EQ(fs::last_write_time(out()),
            before);  // nothing that includes it rebuilds
}

TEST_F(GitCommitScript, OutsideAGitCheckoutTheCommitIsUnknown) {
  fs::remove_all(repo_ / ".git");
  EXPECT_NE(generate().find("return \"unknown\";"), std::string::npos);
}

TEST(GitCommit, ProvenanceCarriesTheBuiltCommit) {
  std::string commit = hangbench::git_commit();
  EXPECT_FALSE(commit.empty());
  EXPECT_TRUE(commit == "unknown" || commit.find_first_not_of("0123456789abcdef") >= 12) << commit;
}

}  // namespace
