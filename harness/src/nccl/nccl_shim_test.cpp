// The compat shim, derived with nm -D from a fake libtorch and a fake NCCL
// compiled by the test (CI has no torch): the right names, a working library
// with the right SONAME, stubs that return the NCCL error, and a libtorch
// that loads with RTLD_NOW only when the shim is there.
#include <dlfcn.h>

#include <sstream>

#include "hangbench/model.hpp"
#include "hangbench/nccl_build.hpp"
#include "hangbench/nccl_commands.hpp"
#include "nccl_test_support.hpp"

namespace hangbench::nccl {
namespace {

using namespace hangbench::nccl::testing;

class NcclShimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nccl_ = scratch_ / "libnccl.so.2";
    torch_ = scratch_ / "libtorch_cuda.so";
    run_ok({c_compiler(), "-shared", "-fPIC", "-o", nccl_, "-Wl,-soname,libnccl.so.2", "-DFAKE_VERSION_CODE=21701",
            "-DFAKE_VERSION_STRING=\"NCCL version 2.17.1\"", "-DSOCKET_CLOSE_SHUTDOWN=0", "-DOTHER_SHUTDOWN_CALLER=0",
            (kFixtures / "elf" / "fake_nccl.c").string()});
    run_ok({c_compiler(), "-shared", "-fPIC", "-o", torch_, (kFixtures / "elf" / "fake_torch.c").string()});
  }
  ScratchDir scratch_{"shim"};
  std::string nccl_, torch_;
};

TEST_F(NcclShimTest, MissingNamesAreWhatTorchImportsAndNcclLacks) {
  EXPECT_EQ(missing_nccl_symbols(torch_, nccl_), (std::vector<std::string>{"ncclCommSplit", "ncclMemAlloc"}));
}

TEST_F(NcclShimTest, GeneratedSourceNamesEachStubAndItsError) {
  const std::string source = compat_shim_source({"ncclCommSplit"}, torch_, nccl_, 5);
  EXPECT_NE(source.find("int ncclCommSplit(void) { return 5; }"), std::string::npos) << source;
  EXPECT_NE(source.find("ncclInvalidUsage"), std::string::npos);
}

TEST_F(NcclShimTest, BuiltShimHasTheSonameAndReturnsTheError) {
  const std::string shim = scratch_ / "libnccl_compat_shim.so";
  std::ostringstream out, err;
  ASSERT_EQ(shim_command(torch_, nccl_, shim, 3, out, err), exit_code::kOk) << err.str();
  EXPECT_NE(out.str().find("2 missing entry point(s)"), std::string::npos) << out.str();
  EXPECT_NE(run_ok({"readelf", "-d", shim}).find("[libnccl_compat_shim.so]"), std::string::npos);
  void* handle = dlopen(shim.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto split = reinterpret_cast<int (*)()>(dlsym(handle, "ncclCommSplit"));
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split(), 3);  // ncclInternalError, as asked
  dlclose(handle);
}

TEST_F(NcclShimTest, TorchLoadsWithRtldNowOnlyWithTheShim) {
  const std::string shim = scratch_ / "libnccl_compat_shim.so";
  build_compat_shim(torch_, nccl_, shim);
  // In a child: dlopen of torch must fail with only NCCL global, succeed with the shim too.
  const std::string probe = scratch_ / "probe.c";
  write_file(probe,
             "#include <dlfcn.h>\n#include <stdio.h>\n"
             "int main(int argc, char** argv) {\n"
             "  for (int i = 2; i < argc; ++i) if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) return 3;\n"
             "  void* t = dlopen(argv[1], RTLD_NOW);\n"
             "  if (!t) { puts(dlerror()); return 1; }\n"
             "  int (*split)(void) = (int (*)(void))dlsym(t, \"torch_probe_split\");\n"
             "  printf(\"split=%d\\n\", split());\n  return 0;\n}\n");
  run_ok({c_compiler(), "-o", scratch_ / "probe", probe, "-ldl"});
  ProcessResult without = run_process({scratch_ / "probe", torch_, nccl_});
  EXPECT_EQ(without.exit_status, 1) << without.output;
  EXPECT_NE(without.output.find("undefined symbol"), std::string::npos) << without.output;
  ProcessResult with = run_process({scratch_ / "probe", torch_, nccl_, shim});
  EXPECT_EQ(with.exit_status, 0) << with.output;
  EXPECT_NE(with.output.find("split=5"), std::string::npos) << with.output;
}

TEST_F(NcclShimTest, NotNcclAndMissingFilesAreUsageErrors) {
  std::ostringstream out, err;
  auto shim = [&](const std::string& torch, const std::string& nccl, int error_code) {
    return cli_exit("nccl shim", err,
                    [&] { return shim_command(torch, nccl, scratch_ / "x.so", error_code, out, err); });
  };
  EXPECT_EQ(shim(torch_, torch_, 5), exit_code::kUsage);
  EXPECT_EQ(shim(scratch_ / "none.so", nccl_, 5), exit_code::kUsage);
  EXPECT_EQ(shim(torch_, nccl_, 0), exit_code::kUsage);
}

}  // namespace
}  // namespace hangbench::nccl
