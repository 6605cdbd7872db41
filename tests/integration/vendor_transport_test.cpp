// ci/pack_vendor_libs.sh and ci/unpack_vendor_libs.sh with the built
// hangbench: vendor entries made from synthetic wheels are slimmed, packed into
// parts under a size limit, restored into another cache and listed there.
#include <sstream>

#include "hangbench/model.hpp"
#include "hangbench/nccl_fatbin.hpp"
#include "hangbench/nccl_vendor.hpp"
#include "nccl/nccl_fatbin_support.hpp"
#include "nccl/sha256.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kPack = std::string(HB_SOURCE_DIR) + "/ci/pack_vendor_libs.sh";
const std::string kUnpack = std::string(HB_SOURCE_DIR) + "/ci/unpack_vendor_libs.sh";

class VendorTransportTest : public ::testing::Test {
 protected:
  // A vendor entry from a wheel holding a fake library whose sm_90 SASS is `kept` random bytes.
  VendorEntry entry(const std::string& version, size_t kept) {
    const std::string lib = fake_nccl_with_fatbin(
        scratch_, "lib" + version + ".so", fatbin_container({{2, 80, 4096, true}, {2, 90, kept, true}}, 1),
        fatbin_container({{1, 90, 4096, true}}, 3), "21701", "NCCL version " + version + "+cuda12.2");
    const fs::path stage = scratch_.path() / ("stage-" + version);
    fs::create_directories(stage / "nvidia" / "nccl" / "lib");
    fs::copy_file(lib, stage / "nvidia" / "nccl" / "lib" / "libnccl.so.2");
    write_file((stage / ("nvidia_nccl_cu12-" + version + ".dist-info") / "METADATA").string(),
               "Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: " + version + "\n");
    const std::string wheel = scratch_ / ("nvidia_nccl_cu12-" + version + "-py3-none-any.whl");
    run_ok({"python3", "-m", "zipfile", "-c", wheel, "nvidia", "nvidia_nccl_cu12-" + version + ".dist-info"},
           stage.string());
    return fetch_vendor({{}, {wheel}, 12, cache_}, [](const std::string&) {})[0];
  }
  ScratchDir scratch_{"transport"};
  std::string cache_ = scratch_ / "cache";
};

TEST_F(VendorTransportTest, PacksSlimmedEntriesIntoPartsAndRestoresThemElsewhere) {
  // Each archive holds 600 kB of incompressible kept SASS: a 1 MiB part holds one of them, not two.
  const VendorEntry a = entry("2.18.1", 600000), b = entry("2.18.3", 600000), c = entry("2.19.3", 600000);
  const std::string parts = scratch_ / "parts";
  const ProcessResult pack =
      run_process({"env", "HANGBENCH=" + kHangbench, "XZ_OPT=-0 -T1", kPack, cache_, parts, "--max-part-mib", "1"});
  ASSERT_EQ(pack.exit_status, 0) << pack.output;
  std::vector<std::string> part_dirs;
  size_t archives = 0;
  for (const auto& d : fs::directory_iterator(parts)) {
    if (!d.is_directory()) continue;
    part_dirs.push_back(d.path().string());
    uintmax_t bytes = 0;
    for (const auto& f : fs::directory_iterator(d.path())) bytes += fs::file_size(f.path()), ++archives;
    EXPECT_LE(bytes, 1u << 20) << d.path();
  }
  EXPECT_EQ(archives, 3u);
  EXPECT_EQ(part_dirs.size(), 3u);
  EXPECT_TRUE(fs::exists(fs::path(parts) / "parts.tsv"));

  const std::string gpu_cache = scratch_ / "gpu-cache";
  std::vector<std::string> unpack = {kUnpack, gpu_cache};
  unpack.insert(unpack.end(), part_dirs.begin(), part_dirs.end());
  const ProcessResult restored = run_process(unpack);
  ASSERT_EQ(restored.exit_status, 0) << restored.output;
  EXPECT_NE(restored.output.find("restored 3 vendor entries"), std::string::npos) << restored.output;

  for (const VendorEntry* e : {&a, &b, &c}) {
    const fs::path copy = fs::path(gpu_cache) / "vendor" / fs::path(e->output_dir).filename() / "lib" / "libnccl.so.2";
    const auto m = find_cache_entry_for_library(copy.string());
    ASSERT_TRUE(m.has_value()) << copy;
    EXPECT_EQ((*m)["original_library_sha256"], e->manifest["library_sha256"]);
    EXPECT_EQ((*m)["library_sha256"], sha256_file_hex(copy.string()));
    EXPECT_EQ((*m)["slimmed_for_transport"]["kept_sm"], 90);
    EXPECT_EQ(fs::file_size(copy), fs::file_size(e->library));
    const FatbinSummary f = read_fatbin(copy.string());
    EXPECT_EQ(f.sass_archs, (std::vector<uint32_t>{90}));
    EXPECT_TRUE(f.relfatbin_ptx_archs.empty());
  }
  const ProcessResult list = run_process({kHangbench, "nccl", "list", "--cache", gpu_cache});
  ASSERT_EQ(list.exit_status, 0) << list.output;
  EXPECT_NE(list.output.find("nvidia-nccl-cu12 2.19.3"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("sm_90"), std::string::npos) << list.output;
}

TEST_F(VendorTransportTest, UnpackRefusesALibraryThatDoesNotMatchItsManifest) {
  const VendorEntry a = entry("2.18.1", 4096);
  const std::string parts = scratch_ / "parts";
  ASSERT_EQ(run_process({"env", "HANGBENCH=" + kHangbench, "XZ_OPT=-0 -T1", kPack, cache_, parts}).exit_status, 0);
  // Repack the archive with a library altered after slimming.
  const std::string name = fs::path(a.output_dir).filename().string();
  const fs::path archive = fs::path(parts) / "part-01" / (name + ".tar.xz");
  const fs::path work = scratch_.path() / "tamper";
  fs::create_directories(work);
  run_ok({"tar", "-C", work.string(), "-xJf", archive.string()});
  std::ofstream(work / name / "lib" / "libnccl.so.2", std::ios::app) << "x";
  run_ok({"tar", "-C", work.string(), "-cJf", archive.string(), name});
  const ProcessResult restored = run_process({kUnpack, scratch_ / "gpu-cache", (fs::path(parts) / "part-01").string()});
  EXPECT_EQ(restored.exit_status, 3) << restored.output;
  EXPECT_NE(restored.output.find("manifest says"), std::string::npos) << restored.output;
  EXPECT_FALSE(fs::exists(fs::path(scratch_ / "gpu-cache") / "vendor" / name));
}

TEST_F(VendorTransportTest, PackWithoutVendorEntriesExits2) {
  const ProcessResult pack = run_process({"env", "HANGBENCH=" + kHangbench, kPack, cache_, scratch_ / "parts"});
  EXPECT_EQ(pack.exit_status, 2) << pack.output;
  EXPECT_NE(pack.output.find("run hangbench nccl fetch first"), std::string::npos) << pack.output;
}

}  // namespace
}  // namespace hangbench::nccl
