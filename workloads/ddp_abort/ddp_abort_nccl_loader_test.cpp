// workloads/common/nccl_loader: loading a chosen libnccl.so and its error paths.
// Uses stand-in libraries built by workloads/ddp_abort/CMakeLists.txt (FAKE_NCCL_PATH).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "nccl_loader.hpp"

using namespace hangbench::nccl_abi;

namespace {
std::string load_error(const std::string& path) {
  try {
    NcclLibrary::open(path);
  } catch (const NcclLoadError& e) {
    return e.what();
  }
  return "";
}

// A real shared library of this machine that is certainly not NCCL: the libm that defines cos().
std::string libm_path() {
  Dl_info info{};
  double (*cosine)(double) = &std::cos;
  if (dladdr(reinterpret_cast<void*>(cosine), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}
}  // namespace

TEST(NcclVersionString, DecodesBothEncodings) {
  EXPECT_EQ(version_string(21701), "2.17.1");
  EXPECT_EQ(version_string(21801), "2.18.1");
  EXPECT_EQ(version_string(22809), "2.28.9");
  EXPECT_EQ(version_string(2708), "2.7.8");  // before 2.9: major*1000 + minor*100 + patch
  EXPECT_EQ(version_string(0), "unknown");
}

TEST(NcclLoader, LoadsAStandInAndReportsItsVersionAndPath) {
  NcclLibrary lib = NcclLibrary::open(FAKE_NCCL_PATH);
  EXPECT_EQ(lib.version_code(), 21701);
  EXPECT_EQ(lib.version(), "2.17.1");
  EXPECT_EQ(std::filesystem::canonical(lib.resolved_path()), std::filesystem::canonical(FAKE_NCCL_PATH));
  ncclComm_t comm = nullptr;
  ncclUniqueId id{};
  ASSERT_EQ(lib.api().GetUniqueId(&id), kSuccess);
  EXPECT_EQ(id.internal[0], 0x5A);
  ASSERT_EQ(lib.api().CommInitRank(&comm, 1, id, 0), kSuccess);
  EXPECT_NE(comm, nullptr);
  EXPECT_EQ(lib.api().CommAbort(comm), kSuccess);
}

TEST(NcclLoader, CheckTurnsAnErrorCodeIntoAMessageWithTheLibrarysText) {
  NcclLibrary lib = NcclLibrary::open(FAKE_NCCL_PATH);
  EXPECT_NO_THROW(lib.check(kSuccess, "ncclAllReduce"));
  try {
    lib.check(5, "ncclAllReduce");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("ncclAllReduce"), std::string::npos) << what;
    EXPECT_NE(what.find("fake nccl error"), std::string::npos) << what;
    EXPECT_NE(what.find("2.17.1"), std::string::npos) << what;
  }
}

TEST(NcclLoader, MissingFileNamesThePath) {
  std::string error = load_error("/nonexistent/libnccl.so.2");
  EXPECT_NE(error.find("/nonexistent/libnccl.so.2"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST(NcclLoader, EmptyPathIsRejected) { EXPECT_NE(load_error("").find("--nccl-lib"), std::string::npos); }

TEST(NcclLoader, DirectoryIsNotALibrary) {
  std::string error = load_error(std::filesystem::temp_directory_path().string());
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

TEST(NcclLoader, TextFileFailsInDlopenWithItsReason) {
  auto path = std::filesystem::temp_directory_path() / ("ddp_abort_not_elf_" + std::to_string(getpid()) + ".so");
  std::ofstream(path) << "this is not an ELF file\n";
  std::string error = load_error(path.string());
  std::filesystem::remove(path);
  EXPECT_NE(error.find("dlopen"), std::string::npos) << error;
}

TEST(NcclLoader, SharedLibraryThatIsNotNcclIsNamedSo) {
  const std::string libm = libm_path();
  ASSERT_FALSE(libm.empty());
  std::string error = load_error(libm);
  EXPECT_NE(error.find("is not an NCCL library"), std::string::npos) << error;
}

TEST(NcclLoader, LibraryLackingEntryPointsListsThem) {
  std::string error = load_error(FAKE_NCCL_PARTIAL_PATH);
  EXPECT_NE(error.find("ncclCommAbort"), std::string::npos) << error;
  EXPECT_NE(error.find("ncclCommDestroy"), std::string::npos) << error;
  EXPECT_EQ(error.find("ncclAllReduce"), std::string::npos) << error;
}

TEST(NcclLoader, FromProcessFindsNothingWhenNoNcclIsLoaded) {
  // This test binary loads no NCCL into the global scope (the stand-ins are RTLD_LOCAL).
  EXPECT_THROW(NcclLibrary::from_process(), NcclLoadError);
}
