// One run per output folder: an exclusive flock(2) on <out>/hangbench.lock, held
// for the life of a `run` or `run --resume`. The kernel drops the lock when its
// holder dies, however it dies, so a lock file left by a dead process is taken
// over (with a warning naming it); a live holder makes the second run refuse.
#pragma once

#include <functional>
#include <string>

namespace hangbench::exec_detail {

inline constexpr const char* kLockFile = "hangbench.lock";

class FolderLock {
 public:
  // Locks `dir` (which exists). Throws ConfigError naming the holder's pid when
  // another live process holds it, or when the folder cannot be written.
  FolderLock(const std::string& dir, const std::function<void(const std::string&)>& warn);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace hangbench::exec_detail
