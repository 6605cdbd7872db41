// Unix socket inode -> peer inode, for the caller's network namespace.
#pragma once

#include <cstdint>
#include <map>

namespace hangbench::evidence {
std::map<std::uint64_t, std::uint64_t> read_unix_peers();
}
