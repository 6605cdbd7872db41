// SHA-256 of strings and files, through OpenSSL's libcrypto (SHA extensions
// where the CPU has them): matrix files and libraries are hashed into the
// provenance, and a vendor libnccl.so is over 200 MB.
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

#include "hangbench/file_identity.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext new_context() {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("libcrypto: cannot start a SHA-256 digest");
  }
  return context;
}

std::string finish_hex(EVP_MD_CTX* context) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context, digest.data(), &length) != 1) throw std::runtime_error("libcrypto: SHA-256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string hash_descriptor(int fd) {
  DigestContext context = new_context();
  std::vector<unsigned char> buffer(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) return "";
    if (n == 0) break;
    EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(n));
  }
  return finish_hex(context.get());
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  DigestContext context = new_context();
  EVP_DigestUpdate(context.get(), bytes.data(), bytes.size());
  return finish_hex(context.get());
}

std::string sha256_file(const std::string& path) {
  // Once per process per file: every hung trial's evidence inspects the same libraries.
  // Keyed by the resolved path: validate names a library relatively, its cells absolutely.
  static PerFileMemo<std::string> known;
  char resolved[PATH_MAX];
  const std::string key = ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
  return known.get(key, [](const std::string& file) {
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::string();
    std::string digest = hash_descriptor(fd);
    ::close(fd);
    return digest;
  });
}

}  // namespace hangbench
