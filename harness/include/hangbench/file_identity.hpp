// A file's identity as the kernel sees it: the same path, device, inode, size and
// modification time mean the same bytes. PerFileMemo keys the per-process memos
// of work that reads whole files (SHA-256, NCCL library inspection) by it.
#pragma once

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace hangbench {

using FileIdentity = std::tuple<std::string, dev_t, ino_t, off_t, long, long>;

inline FileIdentity file_identity(const std::string& path, const struct stat& st) {
  return {path, st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

// compute(path) once per identity of a regular file; anything else (missing, a
// pipe, a device) is computed every time. Thread-safe; two threads may compute
// the same new file at once, and the first result is kept.
template <class T>
class PerFileMemo {
 public:
  template <class Compute>
  T get(const std::string& path, Compute compute) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return compute(path);
    const FileIdentity key = file_identity(path, st);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = known_.find(key); it != known_.end()) return it->second;
    }
    T value = compute(path);
    std::lock_guard<std::mutex> lock(mutex_);
    return known_.emplace(key, std::move(value)).first->second;
  }

 private:
  std::mutex mutex_;
  std::map<FileIdentity, T> known_;
};

}  // namespace hangbench
