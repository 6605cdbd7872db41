// Synthetic fatbin sections for tests: containers and entries laid out as in
// NVIDIA's libraries (facts.md), written into a generated C file that is
// compiled with tests/fixtures/nccl/elf/fake_nccl.c into a shared library.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "nccl_test_support.hpp"

namespace hangbench::nccl::testing {

using Bytes = std::vector<unsigned char>;

template <typename T>
void put(Bytes& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

struct FakeEntry {
  uint16_t kind = 2;  // 1 PTX, 2 ELF (SASS)
  uint32_t arch = 90;
  size_t payload = 64;  // bytes, filled with a non-zero pattern unique to the entry
  bool random = false;  // pseudo-random bytes instead (xz cannot shrink them)
};

// One container: 16-byte header, then 64-byte entry headers each followed by its payload.
inline Bytes fatbin_container(const std::vector<FakeEntry>& entries, unsigned char seed) {
  Bytes body;
  for (const FakeEntry& e : entries) {
    Bytes header(64, 0);
    put<uint16_t>(header, 0, e.kind);
    put<uint16_t>(header, 2, 0x0101);
    put<uint32_t>(header, 4, 64);
    put<uint64_t>(header, 8, e.payload);
    put<uint32_t>(header, 28, e.arch);
    body.insert(body.end(), header.begin(), header.end());
    uint32_t state = 2463534242u + seed;
    for (size_t i = 0; i < e.payload; ++i) {
      state ^= state << 13, state ^= state >> 17, state ^= state << 5;  // xorshift32
      body.push_back(e.random && i > 0 ? static_cast<unsigned char>(state)
                                       : static_cast<unsigned char>(seed + e.arch + i % 7 + 1));
    }
    ++seed;
  }
  Bytes container(16, 0);
  put<uint32_t>(container, 0, 0xBA55ED50);
  put<uint16_t>(container, 4, 1);
  put<uint16_t>(container, 6, 16);
  put<uint64_t>(container, 8, body.size());
  container.insert(container.end(), body.begin(), body.end());
  return container;
}

inline Bytes concat(const std::vector<Bytes>& parts, size_t zero_padding_between = 0) {
  Bytes all;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) all.insert(all.end(), zero_padding_between, 0);
    all.insert(all.end(), parts[i].begin(), parts[i].end());
  }
  return all;
}

// Top-level asm that puts the bytes of `file` into an allocated section, 8-byte aligned.
inline std::string incbin(const std::string& section, const std::string& file) {
  return fmt::format("__asm__(\".section {},\\\"a\\\"\\n.balign 8\\n.incbin \\\"{}\\\"\\n.previous\");\n", section,
                     file);
}

// A fake libnccl.so (ncclGetVersion reports `version_code`) whose .nv_fatbin
// and __nv_relfatbin hold the given bytes (an empty one: no such section).
inline std::string fake_nccl_with_fatbin(const ScratchDir& dir, const std::string& name, const Bytes& fatbin,
                                         const Bytes& relfatbin, const std::string& version_code = "21701",
                                         const std::string& version_string = "NCCL version 2.17.1+cuda12.1") {
  std::string source;
  for (const auto& [section, bytes] :
       {std::pair{std::string(".nv_fatbin"), &fatbin}, std::pair{std::string("__nv_relfatbin"), &relfatbin}}) {
    if (bytes->empty()) continue;
    const std::string bin = dir / (name + section + ".bin");
    std::ofstream(bin, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    source += incbin(section, bin);
  }
  const std::string c_file = dir / (name + ".fatbin.c");
  write_file(c_file, source.empty() ? "int fake_no_fatbin;\n" : source);
  const std::string out = dir / name;
  run_ok({c_compiler(), "-shared", "-fPIC", "-O2", "-o", out, "-DFAKE_VERSION_CODE=" + version_code,
          "-DFAKE_VERSION_STRING=\"" + version_string + "\"", "-DSOCKET_CLOSE_SHUTDOWN=0", "-DOTHER_SHUTDOWN_CALLER=0",
          (kFixtures / "elf" / "fake_nccl.c").string(), c_file});
  return out;
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace hangbench::nccl::testing
