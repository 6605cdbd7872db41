// The fatbin reader, the "runs on sm_90" reading and `nccl slim` on shared
// libraries with synthetic .nv_fatbin / __nv_relfatbin sections made here.
#include "hangbench/nccl_fatbin.hpp"

#include <sstream>

#include "hangbench/model.hpp"
#include "hangbench/nccl_commands.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "nccl/sha256.hpp"
#include "nccl/version_probe.hpp"
#include "nccl_fatbin_support.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

class NcclFatbinTest : public ::testing::Test {
 protected:
  // Like a CUDA 12 NCCL: two containers (8 bytes of padding between), SASS sm_50/80/90, PTX compute_90;
  // relocatable code with SASS and PTX compute_80.
  std::string modern() {
    const Bytes fatbin = concat({fatbin_container({{2, 50, 40}, {2, 80, 48}, {2, 90, 56}, {1, 90, 72}}, 1),
                                 fatbin_container({{2, 50, 24}, {2, 90, 32}}, 9)},
                                /*zero_padding_between=*/8);
    const Bytes relfatbin = fatbin_container({{2, 80, 40}, {1, 80, 64}}, 20);
    return fake_nccl_with_fatbin(scratch_, "libmodern.so", fatbin, relfatbin);
  }
  // Like the CUDA 11.7 wheels of 2.13/2.14: SASS up to sm_80, no PTX; PTX compute_80 only in relfatbin.
  std::string cuda117() {
    const Bytes fatbin = fatbin_container({{2, 35, 40}, {2, 70, 40}, {2, 80, 48}}, 3);
    const Bytes relfatbin = fatbin_container({{1, 80, 64}}, 30);
    return fake_nccl_with_fatbin(scratch_, "libcuda117.so", fatbin, relfatbin, "21403", "NCCL version 2.14.3+cuda11.7");
  }
  int slim_exit(const std::string& library, const std::string& output, const std::string& entry_out,
                std::string* err_text = nullptr) {
    std::ostringstream out, err;
    const int rc =
        cli_exit("nccl slim", err, [&] { return slim_command(library, output, entry_out, 90, false, out, err); });
    if (err_text) *err_text = err.str();
    return rc;
  }
  ScratchDir scratch_{"fatbin"};
};

TEST_F(NcclFatbinTest, SummaryListsArchitecturesOfEveryContainer) {
  const FatbinSummary s = read_fatbin(modern());
  EXPECT_TRUE(s.fatbin.present);
  EXPECT_EQ(s.fatbin.problem, "");
  EXPECT_EQ(s.fatbin.containers, 2u);
  EXPECT_EQ(s.fatbin.entries.size(), 6u);
  EXPECT_EQ(s.sass_archs, (std::vector<uint32_t>{50, 80, 90}));
  EXPECT_EQ(s.ptx_archs, (std::vector<uint32_t>{90}));
  EXPECT_EQ(s.relfatbin.containers, 1u);
  EXPECT_EQ(s.relfatbin_ptx_archs, (std::vector<uint32_t>{80}));
  EXPECT_EQ(s.zeroed_entries, 0u);
  const ArchReading r = runs_on(s, 90);
  EXPECT_EQ(r.runs, RunsOn::Yes);
  EXPECT_EQ(describe(r), "runs on sm_90: yes (SASS for sm_90)");
}

TEST_F(NcclFatbinTest, Cuda117BuildHasNoCodeForSm90) {
  const ArchReading r = runs_on(read_fatbin(cuda117()), 90);
  EXPECT_EQ(r.runs, RunsOn::No);
  EXPECT_EQ(r.reason,
            "no code for sm_90: .nv_fatbin holds SASS for sm_35 sm_70 sm_80 and no PTX; PTX for compute_80 only "
            "in __nv_relfatbin, which is not loaded at run time");
  // The same library does run on an sm_86 GPU: SASS of its major with a lower minor.
  EXPECT_EQ(runs_on(read_fatbin(cuda117()), 86).runs, RunsOn::Yes);
}

TEST_F(NcclFatbinTest, PtxOfAnOlderArchitectureIsCompiledAtLoad) {
  const Bytes fatbin = fatbin_container({{2, 80, 40}, {1, 80, 40}}, 5);
  const ArchReading r = runs_on(read_fatbin(fake_nccl_with_fatbin(scratch_, "libptx.so", fatbin, {})), 90);
  EXPECT_EQ(r.runs, RunsOn::Yes);
  EXPECT_NE(r.reason.find("by PTX compiled at load"), std::string::npos) << r.reason;
}

TEST_F(NcclFatbinTest, OneContainerWithoutCodeMeansItCannotRun) {
  const Bytes fatbin = concat({fatbin_container({{2, 90, 40}}, 1), fatbin_container({{2, 80, 40}}, 2)});
  const ArchReading r = runs_on(read_fatbin(fake_nccl_with_fatbin(scratch_, "libhalf.so", fatbin, {})), 90);
  EXPECT_EQ(r.runs, RunsOn::No);
  EXPECT_NE(r.reason.find("(1 of 2 fatbin containers have none)"), std::string::npos) << r.reason;
}

TEST_F(NcclFatbinTest, ContainersOnlyForNewerGpusAreNotMissingCode) {
  // Like NCCL 2.27+: most modules carry sm_90 SASS, some only sm_100/sm_120 code.
  const Bytes fatbin = concat({fatbin_container({{2, 80, 40}, {2, 90, 40}, {2, 100, 40}}, 1),
                               fatbin_container({{2, 100, 24}, {2, 120, 24}}, 4)});
  const ArchReading r = runs_on(read_fatbin(fake_nccl_with_fatbin(scratch_, "libnewer.so", fatbin, {})), 90);
  EXPECT_EQ(r.runs, RunsOn::Yes);
  EXPECT_EQ(r.reason,
            "SASS for sm_90; 1 of 2 containers hold code only for newer GPUs (sm_100 sm_120), never "
            "loaded here");
  // Slimmed, the newer-only module is zeroed whole and still reads as one for newer GPUs.
  const std::string slimmed = scratch_ / "libnewer.slim";
  slim_library(scratch_ / "libnewer.so", slimmed, 90);
  EXPECT_EQ(runs_on(read_fatbin(slimmed), 90).runs, RunsOn::Yes);
  // A library whose every module is for newer GPUs has no code for this one.
  const Bytes only_newer = fatbin_container({{2, 100, 24}, {2, 120, 24}}, 4);
  const ArchReading none = runs_on(read_fatbin(fake_nccl_with_fatbin(scratch_, "libonly.so", only_newer, {})), 90);
  EXPECT_EQ(none.runs, RunsOn::No);
  EXPECT_NE(none.reason.find("no code for sm_90"), std::string::npos) << none.reason;
}

TEST_F(NcclFatbinTest, NoFatbinSectionIsUnknown) {
  const FatbinSummary s = read_fatbin(fake_nccl_with_fatbin(scratch_, "libhost.so", {}, {}));
  EXPECT_FALSE(s.fatbin.present);
  EXPECT_EQ(runs_on(s, 90).runs, RunsOn::Unknown);
}

TEST_F(NcclFatbinTest, BadMagicIsReportedNotGuessed) {
  Bytes fatbin = fatbin_container({{2, 90, 40}}, 1);
  fatbin[0] ^= 0xff;
  const std::string lib = fake_nccl_with_fatbin(scratch_, "libbad.so", fatbin, {});
  const FatbinSummary s = read_fatbin(lib);
  EXPECT_NE(s.fatbin.problem.find("no fatbin container magic"), std::string::npos) << s.fatbin.problem;
  EXPECT_EQ(runs_on(s, 90).runs, RunsOn::Unknown);
  std::string err;
  EXPECT_EQ(slim_exit(lib, scratch_ / "bad.slim", "", &err), exit_code::kUsage);
  EXPECT_NE(err.find("not slimmed"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(scratch_ / "bad.slim"));
}

TEST_F(NcclFatbinTest, SlimWritesIntoAFolderNotMadeYet) {
  const fs::path out = scratch_.path() / "not" / "made" / "libnccl.so.2";
  const SlimResult r = slim_library(modern(), out.string(), 90);
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(r.kept_entries, 2u);
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
}

TEST_F(NcclFatbinTest, SlimZeroesEverythingButSm90SassAndKeepsTheRestOfTheFileByteForByte) {
  const std::string lib = modern();
  const std::string out = (scratch_.path() / "slim" / "libnccl.so.2").string();
  fs::create_directories(scratch_.path() / "slim");
  const FatbinSummary before = read_fatbin(lib);
  const SlimResult r = slim_library(lib, out, 90);
  EXPECT_EQ(r.kept_entries, 2u);  // one sm_90 SASS per container
  EXPECT_EQ(r.kept_bytes, 56u + 32u);
  EXPECT_EQ(r.zeroed_entries, 4u + 2u);  // four in .nv_fatbin, both of __nv_relfatbin
  EXPECT_EQ(r.zeroed_bytes, 40u + 48u + 72u + 24u + 40u + 64u);
  EXPECT_TRUE(r.notes.empty());

  const Bytes original = read_bytes(lib), slimmed = read_bytes(out);
  ASSERT_EQ(original.size(), slimmed.size());
  EXPECT_EQ(r.file_size, original.size());
  std::vector<bool> zeroed(original.size(), false);
  for (const auto* section : {&before.fatbin, &before.relfatbin}) {
    for (const FatbinEntry& e : section->entries) {
      const bool kept = section == &before.fatbin && e.kind == FatbinEntryKind::Sass && e.arch == 90;
      for (uint64_t i = 0; i < e.payload_size; ++i) zeroed[e.payload_offset + i] = !kept;
    }
  }
  size_t changed_outside = 0, nonzero_inside = 0;
  for (size_t i = 0; i < original.size(); ++i) {
    if (zeroed[i])
      nonzero_inside += slimmed[i] != 0;
    else
      changed_outside += slimmed[i] != original[i];
  }
  EXPECT_EQ(changed_outside, 0u);
  EXPECT_EQ(nonzero_inside, 0u);

  const FatbinSummary after = read_fatbin(out);
  EXPECT_EQ(after.sass_archs, (std::vector<uint32_t>{90}));
  EXPECT_TRUE(after.ptx_archs.empty());
  EXPECT_TRUE(after.relfatbin_ptx_archs.empty());
  EXPECT_EQ(after.zeroed_entries, 6u);
  EXPECT_EQ(runs_on(after, 90).runs, RunsOn::Yes);
  EXPECT_EQ(r.original_sha256, sha256_file_hex(lib));
  EXPECT_EQ(r.slimmed_sha256, sha256_file_hex(out));
  EXPECT_NE(r.original_sha256, r.slimmed_sha256);
  // Host code untouched: the library still loads and reports its version.
  const auto version = version_by_dlopen(out);
  ASSERT_TRUE(version.has_value());
  EXPECT_EQ(version->code, 21701);
}

TEST_F(NcclFatbinTest, SlimKeepsWhatTheDriverWouldLoadWhenAContainerHasNoSm90Sass) {
  const Bytes fatbin = concat(
      {fatbin_container({{2, 90, 40}, {2, 80, 40}}, 1), fatbin_container({{2, 80, 40}, {1, 70, 24}, {1, 80, 32}}, 4)});
  const std::string lib = fake_nccl_with_fatbin(scratch_, "libmixed.so", fatbin, {});
  const SlimResult r = slim_library(lib, scratch_ / "mixed.slim", 90);
  EXPECT_EQ(r.kept_entries, 2u);
  EXPECT_EQ(r.kept_bytes, 40u + 32u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], ".nv_fatbin container 1 has no SASS for sm_90: its PTX for compute_80 kept");
  const FatbinSummary after = read_fatbin(scratch_ / "mixed.slim");
  EXPECT_EQ(after.sass_archs, (std::vector<uint32_t>{90}));
  EXPECT_EQ(after.ptx_archs, (std::vector<uint32_t>{80}));
  EXPECT_EQ(runs_on(after, 90).runs, RunsOn::Yes);
}

TEST_F(NcclFatbinTest, SlimmedCuda117BuildStillSaysWhyItCannotRun) {
  const std::string lib = cuda117();
  const SlimResult r = slim_library(lib, scratch_ / "cuda117.slim", 90);
  EXPECT_EQ(r.kept_entries, 0u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("lacks code for that GPU as the original does"), std::string::npos) << r.notes[0];
  const ArchReading after = runs_on(read_fatbin(scratch_ / "cuda117.slim"), 90);
  EXPECT_EQ(after.runs, RunsOn::No);
  EXPECT_EQ(after.reason,
            "no code for sm_90: .nv_fatbin holds no SASS and no PTX; slimmed for transport, its zeroed "
            ".nv_fatbin entries held SASS for sm_35 sm_70 sm_80");
}

TEST_F(NcclFatbinTest, SlimCommandWritesASidecarManifest) {
  const std::string lib = modern();
  const std::string out = scratch_ / "cmd.slim";
  EXPECT_EQ(slim_exit(lib, out, ""), exit_code::kOk);
  std::ifstream in(out + ".slim.json");
  const nlohmann::json m = nlohmann::json::parse(in);
  EXPECT_EQ(m["schema"], "hangbench.nccl-slim/1");
  EXPECT_EQ(m["original_sha256"], sha256_file_hex(lib));
  EXPECT_EQ(m["slimmed_sha256"], sha256_file_hex(out));
  EXPECT_EQ(m["kept_sm"], 90);
  EXPECT_EQ(m["zeroed_entries"], 6);
}

TEST_F(NcclFatbinTest, SlimCommandRefusesBadRequests) {
  const std::string lib = modern();
  std::string err;
  EXPECT_EQ(slim_exit(lib, lib, "", &err), exit_code::kUsage);  // would overwrite its own input
  EXPECT_NE(err.find("must not overwrite"), std::string::npos) << err;
  EXPECT_EQ(slim_exit(lib, "", "", &err), exit_code::kUsage);
  EXPECT_EQ(slim_exit(lib, scratch_ / "a", scratch_ / "b", &err), exit_code::kUsage);
  EXPECT_EQ(slim_exit(lib, "", scratch_ / "entry", &err), exit_code::kUsage);  // not in a cache entry
  EXPECT_NE(err.find("not in an NCCL cache entry"), std::string::npos) << err;
  const std::string host_only = fake_nccl_with_fatbin(scratch_, "libhostonly.so", {}, {});
  EXPECT_EQ(slim_exit(host_only, scratch_ / "h.slim", "", &err), exit_code::kUsage);
  EXPECT_NE(err.find("nothing to slim"), std::string::npos) << err;
  write_file(scratch_ / "text.so", "not an ELF file\n");
  EXPECT_EQ(slim_exit(scratch_ / "text.so", scratch_ / "t.slim", "", &err), exit_code::kUsage);
  EXPECT_FALSE(fs::exists(scratch_ / "h.slim"));
}

TEST_F(NcclFatbinTest, InspectShowsTheFatbinAndTheSm90Reading) {
  const std::string lib = cuda117();
  std::ostringstream out, err;
  EXPECT_EQ(inspect_command({lib}, /*json=*/true, /*try_dlopen=*/false, out, err), exit_code::kOk) << err.str();
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  ASSERT_TRUE(doc.contains("libraries")) << out.str();
  const nlohmann::json j = doc["libraries"].at(0);
  EXPECT_EQ(j["runs_on_sm90"]["runs"], "no");
  EXPECT_EQ(j["fatbin"]["sass_archs"], nlohmann::json({35, 70, 80}));
  EXPECT_EQ(j["fatbin"]["relfatbin_has_ptx"], true);
  std::ostringstream text;
  EXPECT_EQ(inspect_command({lib}, false, false, text, err), exit_code::kOk);
  EXPECT_NE(text.str().find(".nv_fatbin SASS        sm_35 sm_70 sm_80"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("runs on sm_90: no (no code for sm_90"), std::string::npos) << text.str();
}

}  // namespace
}  // namespace hangbench::nccl
