#include "hangbench/atomic_write.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hangbench {

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      const int err = errno;
      out.close();
      std::filesystem::remove(tmp);
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err ? err : ENOSPC));
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace hangbench
