// The sweep's list file: one library per line.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "hangbench/matrix.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::sweep {

std::vector<std::string> read_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "cannot read the library list");
  if (std::filesystem::is_directory(path)) {
    throw ConfigError(path, 0, "a folder: the library list is a file with one path per line");
  }
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  std::vector<std::string> libraries;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    if (line.find_first_of(" \t") != std::string::npos) {
      throw ConfigError(path, line_no, fmt::format("one library path per line, got \"{}\"", line));
    }
    const std::filesystem::path lib(line);
    libraries.push_back(lib.is_absolute() ? lib.string() : (base / lib).lexically_normal().string());
  }
  if (libraries.empty()) {
    throw ConfigError(path, 0, "the library list is empty: no path in it (only blank lines or '#' comments)");
  }
  return libraries;
}

}  // namespace hangbench::sweep
