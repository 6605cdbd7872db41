#include "exec/folder_lock.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "hangbench/errors.hpp"

namespace hangbench::exec_detail {
namespace {

// The pid written in the lock file by its last holder, or 0.
int recorded_pid(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::atoi(buf) : 0;
}

}  // namespace

FolderLock::FolderLock(const std::string& dir, const std::function<void(const std::string&)>& warn) {
  std::string path = (std::filesystem::path(dir) / kLockFile).string();
  // O_NOFOLLOW: a link planted as the lock would have us truncate the file it names.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd_ < 0 && errno == ELOOP) {
    throw InfraError("the lock " + path +
                     " is a symbolic link; hangbench follows none in its output folder (remove it)");
  }
  if (fd_ < 0) {
    throw InfraError("cannot write in the output folder " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw InfraError("the lock " + path + " is not a regular file (remove it)");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    int holder = recorded_pid(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw UsageError("the output folder " + dir + " is in use by another hangbench run" +
                       (holder > 0 ? " (pid " + std::to_string(holder) + ")" : "") +
                       "; wait for it to finish or choose another --out");
    }
    throw InfraError("cannot lock " + path + ": " + std::strerror(err));
  }
  int previous = recorded_pid(fd_);
  if (previous > 0 && previous != ::getpid() && warn) {
    warn("the lock of " + dir + " was left by pid " + std::to_string(previous) +
         ", which no longer runs there; taking it over");
  }
  std::string mine = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, mine.data(), mine.size(), 0) != static_cast<ssize_t>(mine.size())) {
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw InfraError("cannot write " + path + ": " + std::strerror(err));
  }
}

FolderLock::~FolderLock() {
  if (fd_ < 0) return;
  // Emptied, not removed: removing would let a waiter lock a file no one else sees.
  if (::ftruncate(fd_, 0) != 0) {
  }
  ::close(fd_);
}

}  // namespace hangbench::exec_detail
