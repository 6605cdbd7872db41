// SHA-256 of strings and files (harness/src/store/sha256.cpp): the FIPS 180-2
// test vectors, a file whose bytes change under the same path, and the memo.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "hangbench/file_identity.hpp"
#include "hangbench/provenance.hpp"

namespace {

namespace fs = std::filesystem;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(hangbench::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hangbench::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hangbench::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hangbench::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FileDigestFollowsItsBytes) {
  fs::path file = fs::temp_directory_path() / ("hb_sha256_" + std::to_string(::getpid()));
  // Larger than one read, not a multiple of it.
  std::ofstream(file, std::ios::binary) << std::string(3 * (1 << 20) + 7, 'a');
  const std::string first = hangbench::sha256_file(file.string());
  EXPECT_EQ(first, hangbench::sha256_hex(std::string(3 * (1 << 20) + 7, 'a')));
  EXPECT_EQ(hangbench::sha256_file(file.string()),
            first);  // asked again: the same
  // New bytes under the same path (a rebuilt library): a new digest, not the
  // remembered one.
  std::ofstream(file, std::ios::binary) << "abc";
  EXPECT_EQ(hangbench::sha256_file(file.string()), hangbench::sha256_hex("abc"));
  fs::remove(file);
  EXPECT_EQ(hangbench::sha256_file(file.string()),
            "");  // unreadable: empty, as the provenance records it
}

}  // namespace

namespace {

// The memo behind sha256_file: threads asking for one file at once share one
// computation, and a failed computation is not remembered.
TEST(PerFileMemo, ThreadsAskingAtOnceShareOneComputation) {
  fs::path file = fs::temp_directory_path() / ("hb_memo_" + std::to_string(::getpid()));
  std::ofstream(file) << "bytes";
  hangbench::PerFileMemo<int> memo;
  std::atomic<int> computed{0};
  std::atomic<bool> release{false};
  auto slow = [&](const std::string&) {
    ++computed;
    while (!release.load()) std::this_thread::yield();  // held until every asker is waiting
    return 42;
  };
  std::vector<std::future<int>> askers;
  for (int i = 0; i < 4; ++i)
    askers.push_back(std::async(std::launch::async, [&] { return memo.get(file.string(), slow); }));
  // Every asker has either started the computation or found it under way.
  while (computed.load() == 0) std::this_thread::yield();
  release = true;
  for (auto& a : askers) EXPECT_EQ(a.get(), 42);
  EXPECT_EQ(computed.load(), 1);
  fs::remove(file);
}

TEST(PerFileMemo, AFailureIsNotRemembered) {
  fs::path file = fs::temp_directory_path() / ("hb_memo_fail_" + std::to_string(::getpid()));
  std::ofstream(file) << "bytes";
  hangbench::PerFileMemo<int> memo;
  int calls = 0;
  EXPECT_THROW(memo.get(file.string(),
                        [&](const std::string&) -> int {
                          ++calls;
                          throw std::runtime_error("no");
                        }),
               std::runtime_error);
  EXPECT_EQ(memo.get(file.string(),
                     [&](const std::string&) {
                       ++calls;
                       return 7;
                     }),
            7);
  EXPECT_EQ(memo.get(file.string(),
                     [&](const std::string&) {
                       ++calls;
                       return 8;
                     }),
            7);
  EXPECT_EQ(calls, 2);
  fs::remove(file);
}

}  // namespace
