// A file's identity as the kernel sees it: the same path, device, inode, size and
// modification time mean the same bytes. Keys the per-process memos of work
// that reads whole files (SHA-256, NCCL library inspection).
#pragma once

#include <sys/stat.h>

#include <string>
#include <tuple>

namespace hangbench {

using FileIdentity = std::tuple<std::string, dev_t, ino_t, off_t, long, long>;

inline FileIdentity file_identity(const std::string& path, const struct stat& st) {
  return {path, st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

}  // namespace hangbench
