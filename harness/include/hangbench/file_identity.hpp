// A file's identity as the kernel sees it: the same path, device, inode, size and
// modification time mean the same bytes. PerFileMemo keys the per-process memos
// of work that reads whole files (SHA-256, NCCL library inspection) by it.
#pragma once

#include <sys/stat.h>

#include <future>
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
// pipe, a device) is computed every time. Thread-safe: a thread that asks for a
// file another thread is computing waits for that result instead of reading the
// file again (validate hashes a 276 MB library in two threads at once).
template <class T>
class PerFileMemo {
 public:
  template <class Compute>
  T get(const std::string& path, Compute compute) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return compute(path);
    const FileIdentity key = file_identity(path, st);
    std::promise<T> mine;
    std::shared_future<T> result;
    bool computes = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = known_.find(key);
      if (it == known_.end()) {
        result = mine.get_future().share();
        known_.emplace(key, result);
        computes = true;
      } else {
        result = it->second;
      }
    }
    if (computes) {
      try {
        mine.set_value(compute(path));
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          known_.erase(key);  // a later call tries again
        }
        mine.set_exception(std::current_exception());
      }
    }
    return result.get();
  }

 private:
  std::mutex mutex_;
  std::map<FileIdentity, std::shared_future<T>> known_;
};

}  // namespace hangbench
