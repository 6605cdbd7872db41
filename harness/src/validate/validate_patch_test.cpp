// `validate --patch FILE [--base V]`: a vendor's patch built, inspected and judged in one
// go, on the miniature NCCL tree of tests/fixtures/nccl/fake_nccl (a git repository made
// here, a fake nvcc; make builds the tiny library) and the fake executor for the trials:
// no real NCCL, no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "hangbench/executor.hpp"
#include "hangbench/nccl_build.hpp"
#include "hangbench/validate.hpp"
#include "nccl/nccl_test_support.hpp"
#include "validate_fixture.hpp"

namespace fs = std::filesystem;
using namespace hangbench;
using namespace hangbench::validate;
using hangbench::nccl::testing::kFixtures;
using hangbench::nccl::testing::run_ok;
using hangbench::nccl::testing::ScratchDir;
using hangbench::nccl::testing::write_file;
using hangbench::testing::kWholeTrial;
using hangbench::testing::trial;
using ::testing::HasSubstr;

namespace {

class ValidatePatch : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string repo = scratch_ / "nccl-git";
    fs::copy(kFixtures / "fake_nccl", repo, fs::copy_options::recursive);
    auto git = [&](std::vector<std::string> tail) {
      std::vector<std::string> cmd = {
          "git", "-c", "user.name=hb", "-c", "user.email=hb@example.invalid", "-c", "init.defaultBranch=main",
          "-C",  repo};
      cmd.insert(cmd.end(), tail.begin(), tail.end());
      std::string out = run_ok(cmd);
      while (!out.empty() && out.back() == '\n') out.pop_back();
      return out;
    };
    git({"init", "-q"});
    git({"add", "."});
    git({"commit", "-q", "-m", "fake nccl"});
    git({"tag", "v2.17.1-1"});
    const std::string commit = git({"rev-parse", "HEAD^{commit}"}), tree = git({"rev-parse", "HEAD^{tree}"});
    git_dir_ = repo + "/.git";
    // The repository's recipe, in miniature: the pin, 2.17.1 and its backport (the fixed reference).
    root_ = scratch_ / "root";
    fs::create_directories(root_ + "/patches");
    fs::copy(kFixtures / "fake_patches", root_ + "/patches", fs::copy_options::recursive);
    write_file(root_ + "/third_party/nccl/pins.toml",
               "[[pin]]\nversion = \"2.17.1\"\ntag = \"v2.17.1-1\"\ncommit = \"" + commit + "\"\ntree = \"" + tree +
                   "\"\ntarball_url = \"http://127.0.0.1:9/unreachable.tar.gz\"\n"
                   "tarball_prefix = \"nccl-2.17.1-1\"\ntarball_sha256 = \"" +
                   std::string(64, '0') + "\"\n");
    write_file(root_ + "/third_party/nccl/variants.toml",
               "[[variant]]\nname = \"2.17.1\"\npin = \"2.17.1\"\npatches = [\"patches/0001-build-fix.patch\"]\n\n"
               "[[variant]]\nname = \"2.17.1+backport\"\nbase = \"2.17.1\"\n"
               "patches = [\"patches/0002-shutdown-backport.patch\"]\n");
    cuda_home_ = scratch_ / "cuda";
    write_file(cuda_home_ + "/bin/nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
    fs::permissions(cuda_home_ + "/bin/nvcc", fs::perms::owner_all);
    // The vendor's patch, named from where they stand: a fix of its own (shutdown() before
    // close(), written otherwise than the backport, so its bytes and cache key are its own).
    vendor_ = scratch_ / "vendor";
    fs::create_directories(vendor_);
    write_file(vendor_ + "/acme-teardown.patch",
               "acme: shut the peer socket down before closing it\n\n"
               "--- a/src/misc/socket.c\n+++ b/src/misc/socket.c\n@@ -5,7 +5,7 @@\n \n"
               " int ncclSocketClose(struct ncclSocket* sock) {\n   if (sock != 0) {\n"
               "-    if (sock->fd >= 0) close(sock->fd);\n"
               "+    if (sock->fd >= 0) shutdown(sock->fd, SHUT_RDWR), close(sock->fd);\n"
               "     sock->state = 4;\n     sock->fd = -1;\n   }\n");
    write_file(scratch_ / "workload", "#!/bin/sh\n");  // exists; the fake executor never runs it
    before_ = fs::current_path();
    fs::current_path(vendor_);
  }
  void TearDown() override { fs::current_path(before_); }

  Request request() const {
    Request r;
    r.build.patched.base = "2.17.1";
    r.build.patched.patches = {"acme-teardown.patch"};
    r.build.git_dir = git_dir_;
    r.build.allow_download = false;
    r.build.cuda_home = cuda_home_;
    r.build.jobs = 1;
    r.recipe_dir = root_ + "/third_party/nccl";
    r.reference_dir = scratch_ / "cache";
    r.workload = scratch_ / "workload";
    r.out_dir = scratch_ / "out";
    r.no_reuse = true;
    return r;
  }

  ScratchDir scratch_{"validate-patch"};
  std::string git_dir_, root_, cuda_home_, vendor_;
  fs::path before_;
};

// The patched build, the two references built beside it, the built library judged: its
// bytes call shutdown() and its trials pass like the fixed reference's, so it is fixed.
TEST_F(ValidatePatch, BuildsThePatchAndTheReferencesThenJudgesWhatItBuilt) {
  FakeExecutor fake([](const Cell& cell, int index) {
    return trial(cell.id, index, cell.params.at("role") == "vulnerable" ? Outcome::Hang : Outcome::Passed, kWholeTrial);
  });
  std::ostringstream log;
  const Result result = run(request(), &fake, &log);
  ASSERT_EQ(result.built.size(), 3u) << log.str();
  EXPECT_EQ(result.built[0].name, "2.17.1");
  EXPECT_EQ(result.built[1].name, "2.17.1+backport");
  EXPECT_EQ(result.built[2].name, "2.17.1+acme-teardown");
  EXPECT_EQ(result.built[2].how, "relinked from 2.17.1");
  EXPECT_NE(result.built[2].cache_key, result.built[1].cache_key);  // not the backport's build
  EXPECT_EQ(result.candidate.library, result.built[2].library);
  EXPECT_EQ(result.vulnerable.library, result.built[0].library);  // the references: the builds of this cache
  EXPECT_EQ(result.fixed.library, result.built[1].library);
  EXPECT_EQ(result.reading.fix, StaticFix::Present) << log.str();  // the vendor's shutdown() is in the bytes
  EXPECT_EQ(result.decision.verdict, validate::Verdict::Fixed) << result.decision.reason;
  EXPECT_THAT(log.str(), HasSubstr("built 2.17.1+acme-teardown (relinked from 2.17.1): " + result.built[2].library));
  const auto j = to_json(result);
  ASSERT_EQ(j["built"].size(), 3u);
  EXPECT_EQ(j["built"][2]["variant"], "2.17.1+acme-teardown");
  EXPECT_EQ(j["library"], result.built[2].library);
}

// A vendor's patch byte for byte the backport's has the backport's cache key: its build
// is the fixed reference's tree made again (nothing recompiled), and the two libraries'
// equal bytes run their trials once for both.
TEST_F(ValidatePatch, APatchIdenticalToTheBackportSharesItsBuildAndItsTrials) {
  fs::copy_file(kFixtures / "fake_patches" / "0002-shutdown-backport.patch", vendor_ + "/acme-teardown.patch",
                fs::copy_options::overwrite_existing);
  FakeExecutor fake([](const Cell& cell, int index) {
    return trial(cell.id, index, cell.params.at("role") == "vulnerable" ? Outcome::Hang : Outcome::Passed, kWholeTrial);
  });
  std::ostringstream log;
  const Result result = run(request(), &fake, &log);
  ASSERT_EQ(result.built.size(), 3u) << log.str();
  EXPECT_EQ(result.built[2].name, "2.17.1+acme-teardown");
  EXPECT_EQ(result.built[2].cache_key, result.built[1].cache_key);
  EXPECT_EQ(result.built[2].how, "re-made in its cached tree");
  EXPECT_THAT(log.str(), HasSubstr("the same bytes as candidate")) << log.str();
  EXPECT_EQ(result.decision.verdict, validate::Verdict::Fixed) << result.decision.reason;
}

TEST_F(ValidatePatch, APatchThatIsNotAFileOrBesideNcclIsAUsageError) {
  FakeExecutor fake;
  Request r = request();
  r.build.patched.patches = {"missing.patch"};
  try {
    run(r, &fake);
    ADD_FAILURE() << "no error for a missing patch";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--patch missing.patch: no such file (relative paths are from " + vendor_));
  }
  r = request();
  r.library = "/some/libnccl.so.2";
  EXPECT_THROW(run(r, &fake), UsageError);
  EXPECT_TRUE(fake.calls().empty());  // no trial ran
}

}  // namespace
