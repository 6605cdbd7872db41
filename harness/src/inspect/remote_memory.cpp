#include "inspect/remote_memory.hpp"

#include <sys/uio.h>

#include <cerrno>

namespace hangbench::diagnose {

bool RemoteMemory::read(std::uint64_t address, void* out, std::size_t size) const {
  if (address == 0 || size == 0) return size == 0;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n < 0) last_errno_ = errno;
  return n == static_cast<ssize_t>(size);
}

}  // namespace hangbench::diagnose
