#include "nccl/version_probe.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>

namespace hangbench::nccl {

NcclVersion decode_version_code(int code) {
  int major, minor, patch;
  if (code >= 10000) {
    major = code / 10000, minor = (code % 10000) / 100, patch = code % 100;
  } else {
    major = code / 1000, minor = (code % 1000) / 100, patch = code % 100;
  }
  return {code, std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch),
          major * 10000 + minor * 100 + patch};
}

std::optional<NcclVersion> version_by_dlopen(const std::string& path, int timeout_s) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (child == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(timeout_s));
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle) _exit(1);
    using GetVersion = int (*)(int*);
    auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
    int code = 0;
    if (!get_version || get_version(&code) != 0) _exit(1);
    ssize_t written = write(fds[1], &code, sizeof code);
    _exit(written == static_cast<ssize_t>(sizeof code) ? 0 : 1);
  }
  close(fds[1]);
  int code = 0;
  ssize_t got = 0;
  pollfd wait_for{fds[0], POLLIN, 0};
  if (poll(&wait_for, 1, timeout_s * 1000) > 0) got = read(fds[0], &code, sizeof code);
  close(fds[0]);
  kill(child, SIGKILL);  // harmless if it already exited; needed if it hangs
  int status = 0;
  waitpid(child, &status, 0);
  if (got != static_cast<ssize_t>(sizeof code) || code <= 0) return std::nullopt;
  return decode_version_code(code);
}

std::optional<NcclVersion> version_from_string(const std::string& rodata) {
  // A plain scan: std::regex recurses per character and the section is tens of MB.
  static const std::string kPrefix = "NCCL version ";
  for (size_t at = rodata.find(kPrefix); at != std::string::npos; at = rodata.find(kPrefix, at + 1)) {
    int parts[3] = {0, 0, 0};
    size_t pos = at + kPrefix.size();
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i) {
      const size_t digits_start = pos;
      while (pos < rodata.size() && std::isdigit(static_cast<unsigned char>(rodata[pos])))
        parts[i] = parts[i] * 10 + (rodata[pos++] - '0');
      ok = pos > digits_start && (i == 2 || (pos < rodata.size() && rodata[pos++] == '.'));
    }
    if (!ok) continue;
    return NcclVersion{parts[0] * 10000 + parts[1] * 100 + parts[2],
                       std::to_string(parts[0]) + "." + std::to_string(parts[1]) + "." + std::to_string(parts[2]),
                       parts[0] * 10000 + parts[1] * 100 + parts[2]};
  }
  return std::nullopt;
}

}  // namespace hangbench::nccl
