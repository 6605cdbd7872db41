// Where an ncclUniqueId's bootstrap root listens. NCCL's unique id is its bootstrap
// handle (src/include/bootstrap.h, every tag from v2.16.2-1 to v2.30.7-1): an 8-byte
// magic, then a union ncclSocketAddress, i.e. a sockaddr_in or sockaddr_in6 as the
// kernel wrote it. Any process that can read the id (it travels in the clear through
// stores and environment variables) or scan the port can connect there.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>

#include "nccl_loader.hpp"

namespace hangbench::nccl_bootstrap_silent {

struct RootAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string text;  // "127.0.0.1:41235", "[::1]:41235"
};

// The root's address, or nullopt when the id holds no IPv4/IPv6 address (a stand-in NCCL's id).
std::optional<RootAddress> root_address_of(const nccl_abi::ncclUniqueId& id);

}  // namespace hangbench::nccl_bootstrap_silent
