// `hangbench nccl fetch` and the vendor side of the cache with synthetic
// wheels made here (a zip with METADATA and a fake libnccl.so.2), and a fake
// `python` whose "pip" copies a wheel or prints pip's errors: no network.
#include "hangbench/nccl_vendor.hpp"

#include <sstream>

#include "hangbench/model.hpp"
#include "hangbench/nccl_commands.hpp"
#include "nccl/sha256.hpp"
#include "nccl_fatbin_support.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

class NcclVendorTest : public ::testing::Test {
 protected:
  // A wheel laid out like NVIDIA's: nvidia/nccl/lib/libnccl.so.2 and <dist>.dist-info/METADATA.
  std::string wheel(const std::string& file_name, const std::string& library, bool with_metadata = true,
                    const std::string& name = "nvidia-nccl-cu12", const std::string& version = "2.17.1") {
    const fs::path stage = scratch_.path() / ("stage-" + file_name);
    fs::create_directories(stage / "nvidia" / "nccl" / "lib");
    if (!library.empty())
      fs::copy_file(library, stage / "nvidia" / "nccl" / "lib" / "libnccl.so.2");
    else
      write_file((stage / "nvidia" / "nccl" / "include" / "nccl.h").string(), "/* header only */\n");
    const std::string dist_info = "nvidia_nccl_cu12-" + version + ".dist-info";
    if (with_metadata)
      write_file((stage / dist_info / "METADATA").string(),
                 "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nSummary: NCCL\n");
    const std::string out = scratch_ / file_name;
    std::vector<std::string> zip = {"python3", "-m", "zipfile", "-c", out, "nvidia"};
    if (with_metadata) zip.push_back(dist_info);
    run_ok(zip, stage.string());
    return out;
  }
  std::string fake_lib() {
    return fake_nccl_with_fatbin(scratch_, "libnccl-fake.so", fatbin_container({{2, 80, 40}, {2, 90, 48}}, 1),
                                 fatbin_container({{1, 90, 64}}, 7));
  }
  // A stand-in for `python3 -m pip download`: records its arguments, then runs `body`.
  std::string fake_python(const std::string& body) {
    const std::string path = scratch_ / "fake-python";
    write_file(path, "#!/bin/sh\necho \"$@\" >> '" + (scratch_ / "pip-calls") + "'\n" + body + "\n");
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }
  int fetch(VendorRequest request, std::string* out_text = nullptr, std::string* err_text = nullptr) {
    if (request.cache_dir.empty()) request.cache_dir = cache_;
    std::ostringstream out, err;
    const int rc = cli_exit("nccl fetch", err, [&] { return fetch_command(request, /*json=*/true, out, err); });
    if (out_text) *out_text = out.str();
    if (err_text) *err_text = err.str();
    return rc;
  }
  int pip_calls() {
    std::ifstream in(scratch_ / "pip-calls");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  ScratchDir scratch_{"vendor"};
  std::string cache_ = scratch_ / "cache";
};

TEST_F(NcclVendorTest, WheelBecomesACacheEntryWithItsManifest) {
  const std::string lib = fake_lib();
  const std::string whl = wheel("nvidia_nccl_cu12-2.17.1-py3-none-manylinux1_x86_64.whl", lib);
  const auto entries = fetch_vendor({{}, {whl}, 12, cache_}, [](const std::string&) {});
  ASSERT_EQ(entries.size(), 1u);
  const VendorEntry& e = entries[0];
  EXPECT_EQ(e.how, "from wheel");
  const std::string key = sha256_file_hex(whl);
  EXPECT_EQ(e.output_dir, (fs::path(cache_) / "vendor" / ("nvidia-nccl-cu12-2.17.1-" + key.substr(0, 12))).string());
  EXPECT_EQ(sha256_file_hex(e.library), sha256_file_hex(lib));
  const nlohmann::json& m = e.manifest;
  EXPECT_EQ(m["schema"], "hangbench.nccl-vendor/1");
  EXPECT_EQ(m["kind"], "vendor");
  EXPECT_EQ(m["package"], "nvidia-nccl-cu12");
  EXPECT_EQ(m["package_version"], "2.17.1");
  EXPECT_EQ(m["wheel"], "nvidia_nccl_cu12-2.17.1-py3-none-manylinux1_x86_64.whl");
  EXPECT_EQ(m["wheel_sha256"], key);
  EXPECT_EQ(m["wheel_source"], "file");
  EXPECT_EQ(m["nccl_version"], "2.17.1");
  EXPECT_EQ(m["nccl_version_code"], 21701);
  EXPECT_EQ(m["version_source"], "ncclGetVersion");
  EXPECT_EQ(m["cuda_build"], "12.1");
  EXPECT_EQ(m["library_sha256"], sha256_file_hex(lib));
  EXPECT_EQ(m["original_library_sha256"], sha256_file_hex(lib));
  EXPECT_EQ(m["teardown_fix_present"], "no");
  EXPECT_EQ(m["runs_on_sm90"]["runs"], "yes");
  EXPECT_EQ(m["fatbin"]["relfatbin_ptx_archs"], nlohmann::json({90}));
  EXPECT_TRUE(m["slimmed_for_transport"].is_null());
  // On disk too, and nothing left behind from staging.
  std::ifstream in(fs::path(e.output_dir) / "manifest.json");
  EXPECT_EQ(nlohmann::json::parse(in)["wheel_sha256"], key);
  int dirs = 0;
  for (const auto& d : fs::directory_iterator(fs::path(cache_) / "vendor")) dirs += d.is_directory();
  EXPECT_EQ(dirs, 1);
}

TEST_F(NcclVendorTest, FetchingAgainReusesTheEntryWithoutDownloading) {
  const std::string whl = wheel("nvidia_nccl_cu12-2.17.1-py3-none-manylinux1_x86_64.whl", fake_lib());
  const auto first = fetch_vendor({{}, {whl}, 12, cache_}, [](const std::string&) {});
  // The same wheel again, then the version by name: both are the cached entry, pip never runs.
  VendorRequest again{{"2.17.1"}, {whl}, 12, cache_, fake_python("exit 1")};
  const auto second = fetch_vendor(again, [](const std::string&) {});
  ASSERT_EQ(second.size(), 2u);
  for (const VendorEntry& e : second) {
    EXPECT_EQ(e.how, "cached");
    EXPECT_EQ(e.output_dir, first[0].output_dir);
  }
  EXPECT_EQ(pip_calls(), 0);
}

TEST_F(NcclVendorTest, DownloadsWithPipWhenTheReleaseIsNotCached) {
  const std::string whl = wheel("nvidia_nccl_cu12-2.17.1-py3-none-manylinux1_x86_64.whl", fake_lib());
  const std::string python =
      fake_python("while [ $# -gt 0 ]; do [ \"$1\" = --dest ] && cp '" + whl + "' \"$2\"/; shift; done; exit 0");
  std::string out, err;
  ASSERT_EQ(fetch({{"2.17.1"}, {}, 12, "", python}, &out, &err), exit_code::kOk) << err;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j[0]["how"], "downloaded");
  EXPECT_EQ(j[0]["wheel_source"], "pypi");
  EXPECT_EQ(j[0]["nccl_version"], "2.17.1");
  std::ifstream calls(scratch_ / "pip-calls");
  std::string argv;
  std::getline(calls, argv);
  for (const char* part : {"-m pip download", "--no-deps", "--only-binary=:all:", "--platform manylinux1_x86_64",
                           "--platform manylinux_2_18_x86_64", "nvidia-nccl-cu12==2.17.1"})
    EXPECT_NE(argv.find(part), std::string::npos) << part << " not in: " << argv;
  // The download folder is gone; only the entry stays.
  int dirs = 0;
  for (const auto& d : fs::directory_iterator(fs::path(cache_) / "vendor")) dirs += d.is_directory();
  EXPECT_EQ(dirs, 1);
}

TEST_F(NcclVendorTest, UnknownVersionExits2AndListsTheVersionsThatExist) {
  const std::string python = fake_python(
      "echo 'ERROR: Could not find a version that satisfies the requirement nvidia-nccl-cu12==2.99.1 "
      "(from versions: 2.16.2, 2.16.5, 2.17.1)' >&2\n"
      "echo 'ERROR: No matching distribution found for nvidia-nccl-cu12==2.99.1' >&2; exit 1");
  std::string err;
  EXPECT_EQ(fetch({{"2.99.1"}, {}, 12, "", python}, nullptr, &err), exit_code::kUsage);
  EXPECT_NE(err.find("nvidia-nccl-cu12 has no release 2.99.1"), std::string::npos) << err;
  EXPECT_NE(err.find("2.16.2, 2.16.5, 2.17.1"), std::string::npos) << err;
}

TEST_F(NcclVendorTest, UnreachableIndexIsAnInfrastructureError) {
  const std::string python = fake_python(
      "echo 'WARNING: Retrying ... Failed to establish a new connection: [Errno 101] Network is unreachable' >&2\n"
      "echo 'ERROR: Could not find a version that satisfies the requirement nvidia-nccl-cu12==2.17.1 "
      "(from versions: none)' >&2; exit 1");
  std::string err;
  EXPECT_EQ(fetch({{"2.17.1"}, {}, 12, "", python}, nullptr, &err), exit_code::kInfra);
  EXPECT_NE(err.find("pip download nvidia-nccl-cu12==2.17.1 failed"), std::string::npos) << err;
}

TEST_F(NcclVendorTest, BadWheelsAndOptionsExit2) {
  std::string err;
  const std::string no_lib = wheel("nvidia_nccl_cu12-2.17.1-py3-none-any.whl", "");
  EXPECT_EQ(fetch({{}, {no_lib}, 12, ""}, nullptr, &err), exit_code::kUsage);
  EXPECT_NE(err.find("holds no libnccl.so.2"), std::string::npos) << err;

  write_file(scratch_ / "not-a-zip.whl", "plain text\n");
  EXPECT_EQ(fetch({{}, {scratch_ / "not-a-zip.whl"}, 12, ""}, nullptr, &err), exit_code::kUsage);
  EXPECT_NE(err.find("not a wheel"), std::string::npos) << err;

  EXPECT_EQ(fetch({{}, {scratch_ / "missing.whl"}, 12, ""}, nullptr, &err), exit_code::kUsage);
  EXPECT_NE(err.find("no such wheel file"), std::string::npos) << err;

  const std::string not_nccl = scratch_ / "libnot.so";
  run_ok({c_compiler(), "-shared", "-fPIC", "-o", not_nccl, (kFixtures / "elf" / "not_nccl.c").string()});
  EXPECT_EQ(fetch({{}, {wheel("nvidia_nccl_cu12-9.9.9-py3-none-any.whl", not_nccl)}, 12, ""}, nullptr, &err),
            exit_code::kUsage);
  EXPECT_NE(err.find("is not an NCCL library"), std::string::npos) << err;

  EXPECT_EQ(fetch({{"2.17.1"}, {}, 10, ""}, nullptr, &err), exit_code::kUsage);
  EXPECT_NE(err.find("--cuda 10"), std::string::npos) << err;
  EXPECT_EQ(fetch({{}, {}, 12, ""}, nullptr, &err), exit_code::kUsage);
  EXPECT_EQ(fetch({{"2.17.1; rm -rf /"}, {}, 12, ""}, nullptr, &err), exit_code::kUsage);
  EXPECT_FALSE(fs::exists(fs::path(cache_) / "vendor") && !fs::is_empty(fs::path(cache_) / "vendor"));
}

TEST_F(NcclVendorTest, WithoutMetadataTheFileNameNamesTheRelease) {
  const std::string whl =
      wheel("nvidia_nccl_cu11-2.14.3-py3-none-manylinux1_x86_64.whl", fake_lib(), /*with_metadata=*/false);
  const auto entries = fetch_vendor({{}, {whl}, 11, cache_}, [](const std::string&) {});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].package, "nvidia-nccl-cu11");
  EXPECT_EQ(entries[0].package_version, "2.14.3");
}

TEST_F(NcclVendorTest, ListShowsPinnedBuildsAndVendorWheelsAndFindsTheEntryOfALibrary) {
  const std::string lib = fake_lib();
  const auto vendor = fetch_vendor({{}, {wheel("nvidia_nccl_cu12-2.17.1-py3-none-any.whl", lib)}, 12, cache_},
                                   [](const std::string&) {});
  const fs::path pinned = fs::path(cache_) / "variants" / "2.17.1+backport-0123456789ab";
  fs::create_directories(pinned / "lib");
  fs::copy_file(lib, pinned / "lib" / "libnccl.so.2");
  write_file((pinned / "manifest.json").string(),
             nlohmann::json({{"variant", "2.17.1+backport"},
                             {"version", "2.17.1"},
                             {"cuda_version", "Cuda compilation tools, release 13.0, V13.0.88"},
                             {"library", "lib/libnccl.so.2"},
                             {"library_sha256", sha256_file_hex(lib)}})
                 .dump());
  std::ostringstream text, json, err;
  ASSERT_EQ(list_command(cache_, false, text, err), exit_code::kOk) << err.str();
  EXPECT_NE(text.str().find("KIND"), std::string::npos);
  EXPECT_NE(text.str().find("pinned  2.17.1+backport"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("vendor  nvidia-nccl-cu12 2.17.1"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(" 13.0 "), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(" 12.1 "), std::string::npos) << text.str();
  ASSERT_EQ(list_command(cache_, true, json, err), exit_code::kOk);
  const nlohmann::json all = nlohmann::json::parse(json.str());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["kind"], "pinned");
  EXPECT_EQ(all[1]["kind"], "vendor");

  const auto found = find_cache_entry_for_library(vendor[0].library);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ((*found)["kind"], "vendor");
  EXPECT_EQ((*found)["cuda_build"], "12.1");
  const auto found_pinned = find_cache_entry_for_library((pinned / "lib" / "libnccl.so.2").string());
  ASSERT_TRUE(found_pinned.has_value());
  EXPECT_EQ((*found_pinned)["kind"], "pinned");
  EXPECT_FALSE(find_cache_entry_for_library(lib).has_value());
  // The GPU bundle's layout, <cache>/<variant>/lib/: the manifest says what it is.
  const fs::path bundled = scratch_.path() / "gpu" / "2.17.1+backport";
  fs::create_directories(bundled / "lib");
  fs::copy(pinned / "manifest.json", bundled / "manifest.json");
  fs::copy_file(lib, bundled / "lib" / "libnccl.so.2");
  const auto found_bundled = find_cache_entry_for_library((bundled / "lib" / "libnccl.so.2").string());
  ASSERT_TRUE(found_bundled.has_value());
  EXPECT_EQ((*found_bundled)["variant"], "2.17.1+backport");
  write_file((bundled / "manifest.json").string(), "{\"something\": \"else\"}");
  EXPECT_FALSE(find_cache_entry_for_library((bundled / "lib" / "libnccl.so.2").string()).has_value());
}

TEST_F(NcclVendorTest, SlimmedCopyOfAnEntryKeepsTheOriginalsHash) {
  const std::string lib = fake_lib();
  const auto vendor = fetch_vendor({{}, {wheel("nvidia_nccl_cu12-2.17.1-py3-none-any.whl", lib)}, 12, cache_},
                                   [](const std::string&) {});
  // Restored elsewhere as the transport does: <other cache>/vendor/<entry name>/.
  const fs::path copy = scratch_.path() / "gpu-cache" / "vendor" / fs::path(vendor[0].output_dir).filename();
  std::ostringstream out, err;
  ASSERT_EQ(slim_command(vendor[0].library, "", copy.string(), 90, false, out, err), exit_code::kOk) << err.str();
  const auto m = find_cache_entry_for_library((copy / "lib" / "libnccl.so.2").string());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ((*m)["kind"], "vendor");
  EXPECT_EQ((*m)["original_library_sha256"], sha256_file_hex(lib));
  EXPECT_EQ((*m)["library_sha256"], sha256_file_hex((copy / "lib" / "libnccl.so.2").string()));
  EXPECT_EQ((*m)["slimmed_for_transport"]["original_sha256"], sha256_file_hex(lib));
  EXPECT_EQ((*m)["slimmed_for_transport"]["kept_sm"], 90);
  EXPECT_EQ((*m)["slimmed_for_transport"]["zeroed_entries"], 2);
  EXPECT_FALSE((*m)["slimmed_for_transport"].contains("library"));  // no paths of the packing machine
  std::ostringstream table;
  ASSERT_EQ(list_command((scratch_.path() / "gpu-cache").string(), false, table, err), exit_code::kOk);
  EXPECT_NE(table.str().find(" sm_90 "), std::string::npos) << table.str();
}

}  // namespace
}  // namespace hangbench::nccl
