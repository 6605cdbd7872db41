// Helpers shared by the nccl_*_test.cpp files: a scratch directory and a C
// compiler call, so fixtures are built at test time from tests/fixtures/nccl.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hangbench/errors.hpp"
#include "nccl/process.hpp"

namespace hangbench::nccl::testing {

namespace fs = std::filesystem;

inline const fs::path kFixtures = fs::path(HB_FIXTURES_DIR) / "nccl";

// A fresh directory under the system temp dir, removed with the object.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    std::string pattern = (fs::temp_directory_path() / ("hb-nccl-" + tag + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Runs a command and fails the test (with its output) when it does not succeed.
inline std::string run_ok(const std::vector<std::string>& argv, const std::string& cwd = "") {
  ProcessResult r = run_process(argv, cwd);
  EXPECT_EQ(r.exit_status, 0) << describe_command(argv) << "\n" << r.output;
  return r.output;
}

inline std::string c_compiler() {
  const char* cc = std::getenv("CC");
  return cc && *cc ? cc : "cc";
}

inline void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// What `hangbench COMMAND` exits with after `body`: its own code, or the one
// cli/guarded.cpp gives what it throws (said on `err` the same way).
template <class Body>
int cli_exit(const std::string& command, std::ostream& err, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    err << error_line(command, e) << "\n";
    return exit_code_of(e);
  }
}

}  // namespace hangbench::nccl::testing
