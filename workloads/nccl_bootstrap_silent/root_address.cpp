#include "root_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace hangbench::nccl_bootstrap_silent {

std::optional<RootAddress> root_address_of(const nccl_abi::ncclUniqueId& id) {
  constexpr size_t kMagicBytes = 8;  // struct ncclBootstrapHandle { uint64_t magic; union ncclSocketAddress addr; }
  const char* at = id.internal + kMagicBytes;
  sa_family_t family = 0;
  std::memcpy(&family, at, sizeof family);
  RootAddress root;
  char host[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, at, sizeof in);
    if (in.sin_port == 0) return std::nullopt;
    std::memcpy(&root.storage, &in, sizeof in);
    root.length = sizeof in;
    ::inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    root.text = std::string(host) + ":" + std::to_string(ntohs(in.sin_port));
  } else if (family == AF_INET6) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, at, sizeof in6);
    if (in6.sin6_port == 0) return std::nullopt;
    std::memcpy(&root.storage, &in6, sizeof in6);
    root.length = sizeof in6;
    ::inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    root.text = "[" + std::string(host) + "]:" + std::to_string(ntohs(in6.sin6_port));
  } else {
    return std::nullopt;
  }
  return root;
}

}  // namespace hangbench::nccl_bootstrap_silent
