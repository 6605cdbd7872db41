// The build driver on a miniature NCCL tree (tests/fixtures/nccl/fake_nccl),
// turned into a git repository and a tarball at test time: source
// verification, patching, cache keys, derived variants that only relink,
// adoption of existing trees, manifests and `list`.
#include "hangbench/nccl_build.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>

#include <sstream>

#include "hangbench/model.hpp"
#include "hangbench/nccl_commands.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "nccl/sha256.hpp"
#include "nccl_test_support.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

class NcclBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A git repository holding the fake tree, tagged like NCCL.
    repo_ = scratch_ / "nccl-git";
    fs::copy(kFixtures / "fake_nccl", repo_, fs::copy_options::recursive);
    const std::vector<std::string> git = {
        "git", "-c", "user.name=hangbench", "-c", "user.email=hb@example.invalid", "-c", "init.defaultBranch=main",
        "-C",  repo_};
    auto with = [&](std::vector<std::string> tail) {
      std::vector<std::string> cmd = git;
      cmd.insert(cmd.end(), tail.begin(), tail.end());
      return run_ok(cmd);
    };
    with({"init", "-q"});
    with({"add", "."});
    with({"commit", "-q", "-m", "fake nccl"});
    with({"tag", "v2.17.1-1"});
    commit_ = trim(with({"rev-parse", "HEAD^{commit}"}));
    tree_ = trim(with({"rev-parse", "HEAD^{tree}"}));
    git_dir_ = repo_ + "/.git";
    tarball_ = scratch_ / "nccl-2.17.1-1.tar.gz";
    with({"archive", "--format=tar.gz", "--prefix=nccl-2.17.1-1/", "-o", tarball_, "v2.17.1-1"});
    // Fake CUDA: only `nvcc --version` is needed for the cache key.
    cuda_home_ = scratch_ / "cuda";
    write_file(cuda_home_ + "/bin/nvcc",
               "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
               "echo 'Cuda compilation tools, release 13.0, V13.0.88'\n");
    fs::permissions(cuda_home_ + "/bin/nvcc", fs::perms::owner_all);
    write_recipe(commit_, tree_, sha256_file_hex(tarball_));
    cache_ = scratch_ / "cache";
  }

  static std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // Recipe layout like the repository's: <root>/third_party/nccl/*.toml, <root>/patches/...
  void write_recipe(const std::string& commit, const std::string& tree, const std::string& tarball_sha,
                    const std::string& backport_patch = "") {
    root_ = scratch_ / "root";
    fs::create_directories(root_ + "/patches");
    fs::copy(kFixtures / "fake_patches", root_ + "/patches",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    if (!backport_patch.empty()) write_file(root_ + "/patches/0002-shutdown-backport.patch", backport_patch);
    write_file(root_ + "/third_party/nccl/pins.toml",
               fmt::format("[[pin]]\nversion = \"2.17.1\"\ntag = \"v2.17.1-1\"\ncommit = \"{}\"\ntree = \"{}\"\n"
                           "tarball_url = \"http://127.0.0.1:9/unreachable.tar.gz\"\n"
                           "tarball_prefix = \"nccl-2.17.1-1\"\ntarball_sha256 = \"{}\"\n",
                           commit, tree, tarball_sha));
    write_file(root_ + "/third_party/nccl/variants.toml",
               "[defaults]\ngencode = \"-gencode=arch=compute_90,code=sm_90\"\n\n"
               "[[variant]]\nname = \"2.17.1\"\npin = \"2.17.1\"\npatches = [\"patches/0001-build-fix.patch\"]\n\n"
               "[[variant]]\nname = \"2.17.1+backport\"\nbase = \"2.17.1\"\n"
               "patches = [\"patches/0002-shutdown-backport.patch\"]\n");
  }

  Recipe recipe() const {
    return load_recipe(root_ + "/third_party/nccl/pins.toml", root_ + "/third_party/nccl/variants.toml", root_);
  }

  BuildOptions options() const {
    BuildOptions o;
    o.git_dir = git_dir_;
    o.allow_download = false;
    o.cache_dir = cache_;
    o.cuda_home = cuda_home_;
    o.jobs = 1;
    return o;
  }

  std::vector<BuiltVariant> build(const BuildOptions& o) {
    return build_variants(recipe(), o, [this](const std::string& line) { progress_.push_back(line); });
  }

  int build_exit(const BuildOptions& o, std::string* err_text = nullptr) {
    std::ostringstream out, err;
    const int rc =
        cli_exit("nccl build", err, [&] { return build_command(o, root_ + "/third_party/nccl", false, out, err); });
    if (err_text) *err_text = err.str();
    return rc;
  }

  static nlohmann::json manifest(const BuiltVariant& b) {
    std::ifstream in(fs::path(b.output_dir) / "manifest.json");
    return nlohmann::json::parse(in);
  }

  ScratchDir scratch_{"build"};
  std::string repo_, git_dir_, commit_, tree_, tarball_, cuda_home_, root_, cache_;
  std::vector<std::string> progress_;
};

TEST_F(NcclBuildTest, BuildsBothVariantsAndTheDerivedOneOnlyRecompilesSocket) {
  const auto built = build(options());
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[0].how, "full build");
  EXPECT_EQ(built[1].how, "relinked from 2.17.1");
  EXPECT_EQ(built[1].recompiled, std::vector<std::string>{"obj/misc/socket.o"});
  EXPECT_FALSE(progress_.empty());

  EXPECT_EQ(inspect(built[0].library).fix, FixVerdict::No);
  EXPECT_EQ(inspect(built[1].library).fix, FixVerdict::Yes);
  EXPECT_NE(built[0].cache_key, built[1].cache_key);
}

TEST_F(NcclBuildTest, ManifestRecordsProvenance) {
  const auto built = build(options());
  const auto m = manifest(built[1]);
  EXPECT_EQ(m["variant"], "2.17.1+backport");
  EXPECT_EQ(m["version"], "2.17.1");
  EXPECT_EQ(m["commit"], commit_);
  EXPECT_EQ(m["gencode"], "-gencode=arch=compute_90,code=sm_90");
  EXPECT_EQ(m["cuda_version"], "Cuda compilation tools, release 13.0, V13.0.88");
  EXPECT_FALSE(m["compiler"].get<std::string>().empty());
  ASSERT_EQ(m["patches"].size(), 2u);  // the base's patch, then its own
  EXPECT_EQ(m["patches"][1]["sha256"], sha256_file_hex(root_ + "/patches/0002-shutdown-backport.patch"));
  EXPECT_EQ(m["patches"][1]["files"], nlohmann::json::array({"src/misc/socket.c"}));
  EXPECT_EQ(m["library_sha256"], sha256_file_hex(built[1].library));
  EXPECT_EQ(m["source"]["kind"], "git");
  EXPECT_EQ(m["source"]["derived_from"], "2.17.1");
}

TEST_F(NcclBuildTest, SecondRunFindsEverythingInTheCache) {
  build(options());
  const auto again = build(options());
  ASSERT_EQ(again.size(), 2u);
  EXPECT_TRUE(again[0].was_cached);
  EXPECT_TRUE(again[1].was_cached);
}

TEST_F(NcclBuildTest, CacheKeyCoversGencodeCudaAndPatches) {
  const Recipe r = recipe();
  const std::string key = cache_key(r, "2.17.1+backport", "G", "cuda 13.0");
  EXPECT_EQ(key, cache_key(r, "2.17.1+backport", "G", "cuda 13.0"));
  EXPECT_NE(key, cache_key(r, "2.17.1+backport", "G2", "cuda 13.0"));
  EXPECT_NE(key, cache_key(r, "2.17.1+backport", "G", "cuda 12.8"));
  EXPECT_NE(key, cache_key(r, "2.17.1", "G", "cuda 13.0"));
  std::ifstream in(root_ + "/patches/0002-shutdown-backport.patch");
  std::string patch((std::istreambuf_iterator<char>(in)), {});
  write_recipe(commit_, tree_, sha256_file_hex(tarball_), "edited header\n" + patch);
  EXPECT_NE(key, cache_key(recipe(), "2.17.1+backport", "G", "cuda 13.0"));
}

TEST_F(NcclBuildTest, VerifiedTarballIsASource) {
  BuildOptions o = options();
  o.git_dir.clear();
  o.source_tarballs = {tarball_};
  o.variants = {"2.17.1"};
  const auto built = build(o);
  EXPECT_EQ(manifest(built[0])["source"]["kind"], "tarball");
}

TEST_F(NcclBuildTest, TarballWithAnotherHashExitsTwo) {
  const std::string other = scratch_ / "other.tar.gz";
  run_ok({"tar", "-czf", other, "-C", scratch_.path().string(), "cuda"});
  BuildOptions o = options();
  o.source_tarballs = {other};
  std::string err;
  EXPECT_EQ(build_exit(o, &err), exit_code::kUsage);
  EXPECT_NE(err.find("matches no pin"), std::string::npos) << err;
}

TEST_F(NcclBuildTest, GitDirWithoutThePinnedCommitExitsTwo) {
  write_recipe(std::string(40, 'a'), tree_, sha256_file_hex(tarball_));
  std::string err;
  EXPECT_EQ(build_exit(options(), &err), exit_code::kUsage);
  EXPECT_NE(err.find("does not contain the pinned commit"), std::string::npos) << err;
}

TEST_F(NcclBuildTest, WrongTreeIdExitsTwo) {
  write_recipe(commit_, std::string(40, 'b'), sha256_file_hex(tarball_));
  std::string err;
  EXPECT_EQ(build_exit(options(), &err), exit_code::kUsage);
  EXPECT_NE(err.find("has tree"), std::string::npos) << err;
}

TEST_F(NcclBuildTest, NoSourceOfflineExitsTwo) {
  BuildOptions o = options();
  o.git_dir.clear();
  std::string err;
  EXPECT_EQ(build_exit(o, &err), exit_code::kUsage);
  EXPECT_NE(err.find("no source for NCCL 2.17.1"), std::string::npos) << err;
}

TEST_F(NcclBuildTest, PatchThatDoesNotApplyExitsTwo) {
  write_recipe(commit_, tree_, sha256_file_hex(tarball_),
               "--- a/src/misc/socket.c\n+++ b/src/misc/socket.c\n@@ -1,1 +1,1 @@\n-no such line\n+other\n");
  std::string err;
  EXPECT_EQ(build_exit(options(), &err), exit_code::kUsage);
  EXPECT_NE(err.find("does not apply cleanly"), std::string::npos) << err;
}

TEST_F(NcclBuildTest, UnknownVariantExitsTwo) {
  BuildOptions o = options();
  o.variants = {"2.99.0"};
  EXPECT_EQ(build_exit(o), exit_code::kUsage);
}

TEST_F(NcclBuildTest, AdoptsAnExistingTreeWithoutRecompiling) {
  // Make a tree by hand the way the lead did: export, patch, make with an absolute BUILDDIR.
  const std::string src = scratch_ / "hand/src", build_dir = scratch_ / "hand/build";
  fs::create_directories(scratch_ / "hand");
  run_ok({"sh", "-c",
          fmt::format("git --git-dir {} archive --prefix=src/ HEAD | tar -x -C {}", git_dir_, scratch_ / "hand")});
  run_ok({"patch", "-p1", "-d", src, "-i", root_ + "/patches/0001-build-fix.patch"});
  run_ok({"make", "-C", src, "src.build", "BUILDDIR=" + build_dir});

  BuildOptions o = options();
  o.adoptions = {{"2.17.1", src, build_dir}};
  const auto built = build(o);
  EXPECT_EQ(built[0].how, "adopted");
  EXPECT_TRUE(built[0].recompiled.empty());
  EXPECT_EQ(built[1].recompiled, std::vector<std::string>{"obj/misc/socket.o"});
  const auto m = manifest(built[0]);
  EXPECT_EQ(m["source"]["kind"], "adopted");
  EXPECT_NE(m["source"]["detail"].get<std::string>().find("identical to commit"), std::string::npos);
  // The adopted copy's dependency files point into the cache, not at the hand-made tree.
  std::ifstream deps(fs::path(cache_) / "trees" / built[0].cache_key.substr(0, 16) / "build/obj/init.d");
  std::string text((std::istreambuf_iterator<char>(deps)), {});
  EXPECT_EQ(text.find(build_dir), std::string::npos) << text;
}

TEST_F(NcclBuildTest, AdoptingAnUnpatchedTreeExitsTwo) {
  const std::string src = scratch_ / "hand/src", build_dir = scratch_ / "hand/build";
  fs::create_directories(build_dir + "/lib");
  write_file(build_dir + "/lib/libnccl.so.2", "x");
  run_ok({"sh", "-c",
          fmt::format("git --git-dir {} archive --prefix=src/ HEAD | tar -x -C {}", git_dir_, scratch_ / "hand")});
  BuildOptions o = options();
  o.adoptions = {{"2.17.1", src, build_dir}};
  std::string err;
  EXPECT_EQ(build_exit(o, &err), exit_code::kUsage);
  EXPECT_NE(err.find("is not applied"), std::string::npos) << err;
}

TEST_F(NcclBuildTest, ListShowsBuiltVariants) {
  std::ostringstream out, err;
  EXPECT_EQ(list_command(cache_, false, out, err), exit_code::kOk);
  EXPECT_NE(out.str().find("the NCCL cache is empty"), std::string::npos);
  build(options());
  const auto manifests = list_built(cache_);
  ASSERT_EQ(manifests.size(), 2u);
  EXPECT_EQ(manifests[0]["variant"], "2.17.1");
  EXPECT_EQ(manifests[1]["variant"], "2.17.1+backport");
  const std::string table = format_built_table(manifests);
  EXPECT_NE(table.find("2.17.1+backport"), std::string::npos);
  EXPECT_NE(table.find("relinked from 2.17.1"), std::string::npos);
}

TEST_F(NcclBuildTest, StripOptionWritesAStrippedCopy) {
  BuildOptions o = options();
  o.variants = {"2.17.1"};
  o.strip = true;
  const auto built = build(o);
  const auto m = manifest(built[0]);
  ASSERT_TRUE(m.contains("stripped_library"));
  const auto r = inspect((fs::path(built[0].output_dir) / m["stripped_library"].get<std::string>()).string());
  EXPECT_FALSE(r.has_symbols);
  EXPECT_TRUE(inspect(built[0].library).has_symbols);  // the default copy keeps its symbols
}

// `nccl build --base 2.17.1 --patch FILE --name NAME`: a vendor's patch, given relative to
// the working directory, built as a variant of its own on the recipe's 2.17.1 (relinked:
// it touches host code only), with no recipe folder written.
class NcclPatchedBuildTest : public NcclBuildTest {
 protected:
  void SetUp() override {
    NcclBuildTest::SetUp();
    vendor_dir_ = scratch_ / "vendor";
    fs::create_directories(vendor_dir_);
    fs::copy_file(kFixtures / "fake_patches" / "0002-shutdown-backport.patch", vendor_dir_ + "/acme-teardown.patch");
    before_ = fs::current_path();
    fs::current_path(vendor_dir_);  // the patch is named as a vendor would: from where they stand
  }
  void TearDown() override { fs::current_path(before_); }

  int patched_exit(const PatchedVariant& patched, std::string* out_text, std::string* err_text = nullptr) {
    BuildOptions o = options();
    o.patched = patched;
    std::ostringstream out, err;
    const int rc =
        cli_exit("nccl build", err, [&] { return build_command(o, root_ + "/third_party/nccl", false, out, err); });
    if (out_text) *out_text = out.str();
    if (err_text) *err_text = err.str();
    return rc;
  }

  std::string vendor_dir_;
  fs::path before_;
};

TEST_F(NcclPatchedBuildTest, BuildsTheVendorsPatchOnTheBaseAsItsOwnVariant) {
  std::string out, err;
  ASSERT_EQ(patched_exit({"2.17.1", {"acme-teardown.patch"}, "acme-2.17.1"}, &out, &err), exit_code::kOk) << err;
  EXPECT_THAT(out, ::testing::HasSubstr("acme-2.17.1")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("relinked from 2.17.1")) << out;
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("2.17.1+backport"))) << out;  // only what was asked

  const auto manifests = list_built(cache_);
  const nlohmann::json* m = nullptr;
  for (const auto& each : manifests)
    if (each["variant"] == "acme-2.17.1") m = &each;
  ASSERT_NE(m, nullptr) << out;
  ASSERT_EQ((*m)["patches"].size(), 2u);  // the base's patch, then the vendor's
  EXPECT_EQ((*m)["patches"][1]["path"], (fs::path(vendor_dir_) / "acme-teardown.patch").string());
  EXPECT_EQ((*m)["patches"][1]["files"], nlohmann::json::array({"src/misc/socket.c"}));
  EXPECT_EQ((*m)["source"]["derived_from"], "2.17.1");
  const std::string library = (fs::path((*m)["output_dir"].get<std::string>()) / "lib/libnccl.so.2").string();
  EXPECT_EQ(inspect(library).fix, FixVerdict::Yes);  // the vendor's patch is in the bytes built
}

TEST_F(NcclPatchedBuildTest, WithoutANameTheVariantIsBasePlusThePatchsName) {
  std::string out, err;
  ASSERT_EQ(patched_exit({"2.17.1", {"acme-teardown.patch"}, ""}, &out, &err), exit_code::kOk) << err;
  EXPECT_THAT(out, ::testing::HasSubstr("2.17.1+acme-teardown ")) << out;
}

TEST_F(NcclPatchedBuildTest, AMissingPatchAnUnknownBaseOrATakenNameExitsTwo) {
  std::string err;
  EXPECT_EQ(patched_exit({"2.17.1", {"no-such.patch"}, "x"}, nullptr, &err), exit_code::kUsage);
  EXPECT_THAT(err, ::testing::HasSubstr("--patch no-such.patch: no such file (relative paths are from " +
                                        fs::current_path().string()))
      << err;
  EXPECT_EQ(patched_exit({"2.99.0", {"acme-teardown.patch"}, "x"}, nullptr, &err), exit_code::kUsage);
  EXPECT_THAT(err, ::testing::HasSubstr("unknown NCCL variant '2.99.0' (known: 2.17.1, 2.17.1+backport)")) << err;
  EXPECT_EQ(patched_exit({"2.17.1", {"acme-teardown.patch"}, "2.17.1+backport"}, nullptr, &err), exit_code::kUsage);
  EXPECT_THAT(err, ::testing::HasSubstr("already has a variant of that name")) << err;
  EXPECT_EQ(patched_exit({"2.17.1", {"acme-teardown.patch"}, "a/b"}, nullptr, &err), exit_code::kUsage);
  EXPECT_THAT(err, ::testing::HasSubstr("without '/'")) << err;
}

TEST_F(NcclPatchedBuildTest, APatchThatDoesNotApplyToTheBaseExitsTwo) {
  write_file(vendor_dir_ + "/wrong.patch",
             "--- a/src/misc/socket.c\n+++ b/src/misc/socket.c\n@@ -1,1 +1,1 @@\n-no such line\n+other\n");
  std::string err;
  EXPECT_EQ(patched_exit({"2.17.1", {"wrong.patch"}, "wrong"}, nullptr, &err), exit_code::kUsage);
  EXPECT_THAT(err, ::testing::HasSubstr("does not apply cleanly")) << err;
}

}  // namespace
}  // namespace hangbench::nccl
