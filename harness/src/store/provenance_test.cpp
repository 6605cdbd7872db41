// The one provenance helper every JSON output uses: argv from /proc/self/cmdline,
// this binary's commit, the machine, and the hash of each library it is given.
#include "hangbench/provenance.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hangbench {
namespace {

TEST(Provenance, CommandLineIsThisProcesssArgv) {
  std::vector<std::string> argv = command_line();
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(std::filesystem::path(argv[0]).filename(), "provenance_test");
}

// The driver's files as the H200's driver 580 writes them (two GPUs: the first by bus id).
TEST(Provenance, NvidiaDriverFactsComeFromTheDriversOwnFiles) {
  const std::filesystem::path root = std::filesystem::path(HB_BINARY_DIR) / "provenance_test_nvidia";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "gpus" / "0000:19:00.0");
  std::filesystem::create_directories(root / "gpus" / "0000:3b:00.0");
  std::ofstream(root / "version") << "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release "
                                     "Build  (dvs-builder@U22)  Thu Oct  2 2025\nGCC version:  gcc version 12.3.0\n";
  std::ofstream(root / "gpus" / "0000:3b:00.0" / "information") << "Model: \t\t NVIDIA A100\nIRQ:   \t\t 17\n";
  std::ofstream(root / "gpus" / "0000:19:00.0" / "information")
      << "Model: \t\t NVIDIA H200\nIRQ:   \t\t 16\nGPU UUID: \t GPU-1\n";
  NvidiaDriverFacts f = read_nvidia_driver_facts(root.string());
  EXPECT_EQ(f.gpu, "NVIDIA H200");
  EXPECT_EQ(f.driver, "580.159.04");
  NvidiaDriverFacts none = read_nvidia_driver_facts((root / "absent").string());
  EXPECT_EQ(none.gpu, "");
  EXPECT_EQ(none.driver, "");
}

TEST(Provenance, HostProvenanceHashesTheLibrariesItIsGiven) {
  const std::filesystem::path dir = std::filesystem::path(HB_BINARY_DIR) / "provenance_test";
  std::filesystem::create_directories(dir);
  const std::string library = (dir / "libfake.so").string();
  std::ofstream(library) << "abc";
  const std::string missing = (dir / "missing.so").string();
  Provenance p = collect_host_provenance({library, missing});
  EXPECT_EQ(p.library_hashes[library], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(p.library_hashes[missing], "unreadable");
  EXPECT_EQ(p.argv, command_line());
  EXPECT_EQ(p.hangbench_commit, git_commit());
  EXPECT_FALSE(p.host.empty());
  EXPECT_FALSE(p.kernel.empty());
  EXPECT_TRUE(p.matrix_path.empty());  // no matrix outside a run
  // No GPU means no driver and no CUDA version either.
  if (p.gpu.empty()) EXPECT_TRUE(p.driver.empty() && p.cuda.empty());
}

TEST(Provenance, JsonKeepsEveryFieldInAStableOrder) {
  Provenance p;
  p.argv = {"hangbench", "nccl", "inspect"};
  p.cuda = "13.0";
  auto j = provenance_json(p);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"hangbench_version", "hangbench_commit", "argv", "host", "kernel", "gpu",
                                            "driver", "cuda", "started_at", "matrix_path", "matrix_sha256",
                                            "library_hashes", "environment"}));
  EXPECT_EQ(j["argv"][1], "nccl");
}

}  // namespace
}  // namespace hangbench
