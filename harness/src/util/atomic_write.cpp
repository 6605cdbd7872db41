#include "hangbench/atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace hangbench {

namespace {

// Every byte of `text` to `fd`; the errno of the failure, or 0. A short write with
// no error is a full device.
int write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  // A device or a pipe (/dev/stdout, a FIFO, /dev/full) is written into, never
  // replaced by a file: renaming over /dev/full would remove the device.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path + ": it is a folder");
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    int err = write_all(fd, text);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
    return;
  }
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& file, int err) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + file + ": " + std::strerror(err));
  };
  // Whatever sits at PATH.tmp (a link planted to a file elsewhere, a leftover) is
  // removed, never followed: the temporary file is always a new one of ours.
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) fail(tmp, errno);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  if (int err = write_all(fd, text); err != 0) {
    ::close(fd);
    fail(tmp, err);
  }
  if (::close(fd) != 0) fail(tmp, errno);
  // rename replaces a link at `path` itself, never the file it points to.
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(path, errno);
}

}  // namespace hangbench
