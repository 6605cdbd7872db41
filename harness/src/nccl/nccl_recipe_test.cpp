// The repository's own NCCL recipe (third_party/nccl, patches/nccl) and the
// parsing rules for pins, variants, patches and --adopt.
#include "hangbench/nccl_build.hpp"
#include "nccl/patching.hpp"
#include "nccl/sha256.hpp"
#include "nccl_test_support.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

const std::string kRoot = HB_SOURCE_DIR;

Recipe repository_recipe() {
  return load_recipe(kRoot + "/third_party/nccl/pins.toml", kRoot + "/third_party/nccl/variants.toml", kRoot);
}

TEST(NcclRecipe, RepositoryPinsBothReleases) {
  const Recipe r = repository_recipe();
  EXPECT_EQ(r.pin("2.17.1").commit, "5d3ab08b69754cb863ab1bf6e3fb6f7612bb725b");
  EXPECT_EQ(r.pin("2.17.1").tree, "27de95fd233b844388b71298f95e24387d8629ad");
  EXPECT_EQ(r.pin("2.18.1").commit, "d97a32fac84f69cbd022ffdc57d5687c760742c7");
  EXPECT_EQ(r.pin("2.18.1").tarball_url, "https://github.com/NVIDIA/nccl/archive/refs/tags/v2.18.1-1.tar.gz");
  EXPECT_EQ(r.default_gencode, "-gencode=arch=compute_90,code=sm_90");
}

TEST(NcclRecipe, RepositoryHasTheFourVariants) {
  const Recipe r = repository_recipe();
  std::vector<std::string> names;
  for (const Variant& v : r.variants) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"2.17.1", "2.17.1+backport", "2.18.1", "2.18.1-noshutdown"}));
  EXPECT_EQ(r.variant("2.18.1-noshutdown").pin, "2.18.1");
  EXPECT_EQ(r.patch_chain("2.17.1+backport"),
            (std::vector<std::string>{"patches/nccl/2.17.1/0001-cuda13-stream-capture-api.patch",
                                      "patches/nccl/2.17.1/0002-socket-close-shutdown-backport.patch"}));
}

TEST(NcclRecipe, ShutdownPatchesOnlyTouchHostCode) {
  for (const char* patch : {"patches/nccl/2.17.1/0002-socket-close-shutdown-backport.patch",
                            "patches/nccl/2.18.1/0002-socket-close-remove-shutdown.patch"}) {
    const auto files = patched_files(kRoot + "/" + patch);
    EXPECT_EQ(files, std::vector<std::string>{"src/misc/socket.cc"}) << patch;
    EXPECT_TRUE(host_only(files)) << patch;
  }
  EXPECT_FALSE(host_only({"src/collectives/device/all_reduce.h"}));
  EXPECT_FALSE(host_only({"src/enqueue.cu"}));
  EXPECT_FALSE(host_only({"makefiles/common.mk"}));
}

TEST(NcclRecipe, VariantWithBothPinAndBaseIsRejected) {
  ScratchDir dir("recipe");
  write_file(dir / "v.toml", "[[variant]]\nname = \"x\"\npin = \"2.17.1\"\nbase = \"y\"\n");
  EXPECT_THROW(load_recipe(kRoot + "/third_party/nccl/pins.toml", dir / "v.toml", kRoot), UsageError);
}

TEST(NcclRecipe, BaseMustBeDefinedFirstAndPatchesMustExist) {
  ScratchDir dir("recipe");
  write_file(dir / "v1.toml", "[[variant]]\nname = \"x\"\nbase = \"later\"\n");
  EXPECT_THROW(load_recipe(kRoot + "/third_party/nccl/pins.toml", dir / "v1.toml", kRoot), UsageError);
  write_file(dir / "v2.toml", "[[variant]]\nname = \"x\"\npin = \"2.17.1\"\npatches = [\"no/such.patch\"]\n");
  EXPECT_THROW(load_recipe(kRoot + "/third_party/nccl/pins.toml", dir / "v2.toml", kRoot), UsageError);
}

TEST(NcclRecipe, MalformedPinsAreRejected) {
  ScratchDir dir("recipe");
  write_file(dir / "broken.toml", "[[pin]\nversion = ");
  EXPECT_THROW(load_recipe(dir / "broken.toml", kRoot + "/third_party/nccl/variants.toml", kRoot), UsageError);
  write_file(dir / "short.toml",
             "[[pin]]\nversion=\"2.17.1\"\ntag=\"t\"\ncommit=\"abc\"\ntree=\"def\"\ntarball_url=\"u\"\n"
             "tarball_prefix=\"p\"\ntarball_sha256=\"00\"\n");
  EXPECT_THROW(load_recipe(dir / "short.toml", kRoot + "/third_party/nccl/variants.toml", kRoot), UsageError);
}

TEST(NcclRecipe, AdoptionSyntax) {
  const Adoption a = parse_adoption("2.17.1=/src/tree:/build/tree");
  EXPECT_EQ(a.variant, "2.17.1");
  EXPECT_EQ(a.source_dir, "/src/tree");
  EXPECT_EQ(a.build_dir, "/build/tree");
  EXPECT_THROW(parse_adoption("2.17.1"), UsageError);
  EXPECT_THROW(parse_adoption("=a:b"), UsageError);
  EXPECT_THROW(parse_adoption("x=a:"), UsageError);
}

TEST(NcclSha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace hangbench::nccl
