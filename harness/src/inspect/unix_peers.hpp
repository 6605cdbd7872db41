// Unix socket inode -> peer inode, for the caller's network namespace.
#pragma once

#include <cstdint>
#include <map>

namespace hangbench::diagnose {
std::map<std::uint64_t, std::uint64_t> read_unix_peers();
}
