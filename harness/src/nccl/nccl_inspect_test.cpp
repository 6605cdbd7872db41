// hangbench::nccl::inspect and `hangbench nccl inspect` on small ELF
// libraries compiled by the test from tests/fixtures/nccl/elf/*.c.
#include "hangbench/nccl_inspect.hpp"

#include <sstream>

#include "hangbench/model.hpp"
#include "hangbench/nccl_commands.hpp"
#include "nccl/version_probe.hpp"
#include "nccl_test_support.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

struct FakeNccl {
  std::string version_code = "21801";
  std::string version_string = "NCCL version 2.18.1+cuda13.0";
  bool socket_close_shutdown = true;
  bool other_shutdown_caller = false;
  std::vector<std::string> extra_flags;
};

class NcclInspectTest : public ::testing::Test {
 protected:
  std::string build(const std::string& name, const FakeNccl& f) {
    const std::string out = scratch_ / name;
    std::vector<std::string> cmd = {c_compiler(),
                                    "-shared",
                                    "-fPIC",
                                    "-O2",
                                    "-o",
                                    out,
                                    "-DFAKE_VERSION_CODE=" + f.version_code,
                                    "-DFAKE_VERSION_STRING=\"" + f.version_string + "\"",
                                    "-DSOCKET_CLOSE_SHUTDOWN=" + std::string(f.socket_close_shutdown ? "1" : "0"),
                                    "-DOTHER_SHUTDOWN_CALLER=" + std::string(f.other_shutdown_caller ? "1" : "0"),
                                    (kFixtures / "elf" / "fake_nccl.c").string()};
    cmd.insert(cmd.end(), f.extra_flags.begin(), f.extra_flags.end());
    run_ok(cmd);
    return out;
  }
  std::string stripped(const std::string& library) {
    const std::string out = library + ".stripped";
    run_ok({"strip", "-o", out, library});
    return out;
  }
  int command_exit(const std::string& library, std::string* err_text = nullptr) {
    std::ostringstream out, err;
    const int rc = inspect_command({library}, /*json=*/false, /*try_dlopen=*/true, out, err);
    if (err_text) *err_text = err.str();
    return rc;
  }
  ScratchDir scratch_{"inspect"};
};

TEST_F(NcclInspectTest, FindsTheCxxMangledSocketClose) {
  FakeNccl mangled;
  mangled.extra_flags = {"-DMANGLED_SOCKET_CLOSE=1"};
  const InspectResult r = inspect(build("libmangled.so", mangled));
  EXPECT_TRUE(r.has_symbols);
  EXPECT_EQ(r.socket_close_calls_shutdown, 1);
  EXPECT_EQ(r.fix, FixVerdict::Yes);
}

TEST_F(NcclInspectTest, SocketCloseCallingShutdownIsFixPresent) {
  const InspectResult r = inspect(build("libfix.so", {}));
  EXPECT_TRUE(r.imports_shutdown);
  EXPECT_TRUE(r.has_symbols);
  EXPECT_EQ(r.socket_close_calls_shutdown, 1);
  EXPECT_EQ(r.fix, FixVerdict::Yes);
  EXPECT_EQ(r.version, "2.18.1");
  EXPECT_EQ(r.sha256.size(), 64u);
}

TEST_F(NcclInspectTest, CloseOnlySocketCloseIsFixAbsentEvenWhenShutdownIsImportedElsewhere) {
  FakeNccl f;
  f.version_code = "21701";
  f.version_string = "NCCL version 2.17.1+cuda13.0";
  f.socket_close_shutdown = false;
  f.other_shutdown_caller = true;  // shutdown imported, but not called by ncclSocketClose
  const InspectResult r = inspect(build("libcloseonly.so", f));
  EXPECT_TRUE(r.imports_shutdown);
  EXPECT_EQ(r.socket_close_calls_shutdown, 0);
  EXPECT_EQ(r.fix, FixVerdict::No);
}

TEST_F(NcclInspectTest, CallsThroughTheGotWithoutPltAreFound) {
  FakeNccl f;
  f.extra_flags = {"-fno-plt"};
  const InspectResult r = inspect(build("libnoplt.so", f));
  EXPECT_EQ(r.socket_close_calls_shutdown, 1);
  EXPECT_EQ(r.fix, FixVerdict::Yes);
}

TEST_F(NcclInspectTest, IbtPltSecStubsAreFound) {
  FakeNccl f;
  f.extra_flags = {"-fcf-protection=full", "-Wl,-z,ibtplt"};
  const InspectResult r = inspect(build("libibt.so", f));
  EXPECT_EQ(r.socket_close_calls_shutdown, 1);
  EXPECT_EQ(r.fix, FixVerdict::Yes);
}

TEST_F(NcclInspectTest, StrippedLibraryImportingShutdownIsUnknown) {
  const InspectResult r = inspect(stripped(build("libfix.so", {})));
  EXPECT_FALSE(r.has_symbols);
  EXPECT_TRUE(r.imports_shutdown);
  EXPECT_EQ(r.socket_close_calls_shutdown, -1);
  EXPECT_EQ(r.fix, FixVerdict::Unknown);
  EXPECT_FALSE(r.reasons.empty());
}

TEST_F(NcclInspectTest, StrippedLibraryWithoutShutdownInTheHangingRangeIsFixAbsent) {
  FakeNccl f;
  f.version_code = "21701";
  f.version_string = "NCCL version 2.17.1+cuda13.0";
  f.socket_close_shutdown = false;
  const InspectResult r = inspect(stripped(build("lib2171.so", f)));
  EXPECT_FALSE(r.imports_shutdown);
  EXPECT_EQ(r.socket_close_calls_shutdown, -1);
  EXPECT_EQ(r.fix, FixVerdict::No);
}

TEST_F(NcclInspectTest, StrippedOldReleaseWithoutShutdownIsUnknown) {
  FakeNccl f;
  f.version_code = "21505";
  f.version_string = "NCCL version 2.15.5+cuda11.8";
  f.socket_close_shutdown = false;
  const InspectResult r = inspect(stripped(build("lib2155.so", f)));
  EXPECT_EQ(r.fix, FixVerdict::Unknown);
}

TEST_F(NcclInspectTest, VersionComesFromDlopenOrFromTheString) {
  FakeNccl f;
  f.version_code = "21803";  // differs from the string on purpose: tells the two sources apart
  const std::string library = build("libversions.so", f);
  const InspectResult loaded = inspect(library, /*try_dlopen=*/true);
  EXPECT_TRUE(loaded.loaded);
  EXPECT_EQ(loaded.version, "2.18.3");
  EXPECT_EQ(loaded.version_code, 21803);
  const InspectResult read = inspect(library, /*try_dlopen=*/false);
  EXPECT_FALSE(read.loaded);
  EXPECT_EQ(read.version, "2.18.1");
}

// A release's mark is a whole C string: a longer name that contains it is no mark.
TEST_F(NcclInspectTest, CarriesStringMatchesWholeCStringsOnly) {
  FakeNccl with;
  with.extra_flags = {"-DCARRIED_STRING=\"CUDA_LAUNCH_BLOCKING\""};
  FakeNccl longer;
  longer.extra_flags = {"-DCARRIED_STRING=\"MY_CUDA_LAUNCH_BLOCKING_X\""};
  const auto a = stripped(build("with.so", with));
  const auto b = stripped(build("longer.so", longer));
  const auto c = build("without.so", FakeNccl{});
  EXPECT_TRUE(carries_string(a, "CUDA_LAUNCH_BLOCKING"));
  EXPECT_FALSE(carries_string(b, "CUDA_LAUNCH_BLOCKING"));
  EXPECT_FALSE(carries_string(c, "CUDA_LAUNCH_BLOCKING"));
  EXPECT_TRUE(carries_string(c, "NCCL version 2.18.1+cuda13.0"));
}

TEST_F(NcclInspectTest, NotNcclIsRejectedWithExitCodeTwo) {
  const std::string library = scratch_ / "libnotnccl.so";
  run_ok({c_compiler(), "-shared", "-fPIC", "-o", library, (kFixtures / "elf" / "not_nccl.c").string()});
  EXPECT_THROW(inspect(library), std::invalid_argument);
  std::string err;
  EXPECT_EQ(command_exit(library, &err), exit_code::kUsage);
  EXPECT_NE(err.find("not an NCCL library"), std::string::npos) << err;
}

TEST_F(NcclInspectTest, TextFileIsRejectedWithExitCodeTwo) {
  const std::string text = scratch_ / "libnccl.so.2";
  write_file(text, "this is not an ELF file\n");
  EXPECT_THROW(inspect(text), std::invalid_argument);
  std::string err;
  EXPECT_EQ(command_exit(text, &err), exit_code::kUsage);
  EXPECT_NE(err.find("not an ELF file"), std::string::npos) << err;
}

TEST_F(NcclInspectTest, ExecutableIsNotASharedLibrary) {
  const std::string program = scratch_ / "program";
  write_file(scratch_ / "main.c", "int main(void) { return 0; }\n");
  run_ok({c_compiler(), "-no-pie", "-o", program, scratch_ / "main.c"});
  std::string err;
  EXPECT_EQ(command_exit(program, &err), exit_code::kUsage);
  EXPECT_NE(err.find("not an ELF shared library"), std::string::npos) << err;
}

TEST_F(NcclInspectTest, MissingFileIsAUsageError) {
  EXPECT_EQ(command_exit(scratch_ / "does-not-exist.so"), exit_code::kUsage);
}

TEST_F(NcclInspectTest, JsonCarriesTheVerdictAndReasons) {
  std::ostringstream out, err;
  ASSERT_EQ(inspect_command({build("libfix.so", {})}, /*json=*/true, true, out, err), exit_code::kOk) << err.str();
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["schema"], "hangbench.nccl-inspect/1");
  EXPECT_FALSE(doc["provenance"]["argv"].empty());
  ASSERT_EQ(doc["libraries"].size(), 1u);
  const auto& j = doc["libraries"][0];
  EXPECT_EQ(j["teardown_fix_present"], "yes");
  EXPECT_EQ(j["fix_present"], true);
  EXPECT_EQ(j["calls_shutdown"], true);
  EXPECT_EQ(j["socket_close_calls_shutdown"], 1);
  EXPECT_TRUE(j["imports_shutdown"]);
  EXPECT_FALSE(j["reasons"].empty());
  EXPECT_EQ(doc["provenance"]["library_hashes"].size(), 1u);
}

TEST_F(NcclInspectTest, RequireFixExitsOneWhenTheFixIsAbsent) {
  std::ostringstream out, err;
  EXPECT_EQ(inspect_command({build("libfix.so", {})}, false, true, out, err, /*require_fix=*/true), exit_code::kOk)
      << err.str();
  FakeNccl f;
  f.version_code = "21701";
  f.socket_close_shutdown = false;
  const std::string close_only = build("libcloseonly.so", f);
  EXPECT_EQ(inspect_command({close_only}, false, true, out, err, /*require_fix=*/false), exit_code::kOk);
  std::ostringstream json_out;
  EXPECT_EQ(inspect_command({close_only}, true, true, json_out, err, /*require_fix=*/true), exit_code::kContradicted);
  EXPECT_NE(err.str().find("the teardown fix is absent"), std::string::npos) << err.str();
  const auto doc = nlohmann::json::parse(json_out.str());
  EXPECT_EQ(doc["libraries"][0]["fix_present"], false);
}

TEST(NcclVersionProbe, DecodesBothEncodings) {
  EXPECT_EQ(decode_version_code(21701).text, "2.17.1");
  EXPECT_EQ(decode_version_code(22809).text, "2.28.9");
  EXPECT_EQ(decode_version_code(2708).text, "2.7.8");
  EXPECT_EQ(decode_version_code(2708).ordinal, 20708);
}

TEST(NcclVersionProbe, ParsesTheEmbeddedString) {
  const auto v = version_from_string(std::string("junk\0NCCL version 2.17.1+cuda13.0\0", 34));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->text, "2.17.1");
  EXPECT_FALSE(version_from_string("NCCL version x.y").has_value());
}

}  // namespace
}  // namespace hangbench::nccl
