#include "nccl/source_tree.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "nccl/process.hpp"
#include "nccl/sha256.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void run_or_throw(const std::vector<std::string>& argv, const std::string& cwd = "") {
  ProcessResult r = run_process(argv, cwd);
  if (r.exit_status != 0)
    throw std::runtime_error(fmt::format("{} failed ({}):\n{}", describe_command(argv), r.exit_status, r.output));
}

// Tarballs hold one top directory (the pin's prefix); move it to `destination`.
void unpack_tarball(const Pin& pin, const std::string& tarball, const std::string& destination) {
  const std::string staging = destination + ".unpack";
  fs::remove_all(staging);
  fs::create_directories(staging);
  run_or_throw({"tar", "-xzf", tarball, "-C", staging});
  const fs::path top = fs::path(staging) / pin.tarball_prefix;
  if (!fs::is_directory(top))
    throw UsageError(fmt::format("{}: no top directory {}/ inside", tarball, pin.tarball_prefix));
  fs::rename(top, destination);
  fs::remove_all(staging);
}

}  // namespace

const Pin& pin_for_tarball(const std::vector<Pin>& pins, const std::string& tarball) {
  if (!fs::is_regular_file(tarball)) throw UsageError("source tarball " + tarball + " does not exist");
  const std::string hash = sha256_file_hex(tarball);
  std::string expected;
  for (const Pin& p : pins) {
    if (p.tarball_sha256 == hash) return p;
    expected += fmt::format("\n  {} {}", p.version, p.tarball_sha256);
  }
  throw UsageError(fmt::format("source tarball {} has SHA-256 {}, which matches no pin; expected one of:{}", tarball,
                               hash, expected));
}

void verify_git_dir(const Pin& pin, const std::string& git_dir) {
  auto rev_parse = [&](const std::string& rev) {
    ProcessResult r = run_process({"git", "--git-dir", git_dir, "rev-parse", "--verify", "-q", rev});
    return r.exit_status == 0 ? trimmed(r.output) : std::string();
  };
  if (!fs::exists(git_dir)) throw UsageError("git directory " + git_dir + " does not exist");
  const std::string commit = rev_parse(pin.commit + "^{commit}");
  if (commit != pin.commit)
    throw UsageError(
        fmt::format("git directory {} does not contain the pinned commit {} of {}", git_dir, pin.commit, pin.tag));
  const std::string tree = rev_parse(pin.commit + "^{tree}");
  if (tree != pin.tree)
    throw UsageError(
        fmt::format("git directory {}: commit {} has tree {}, the pin says {}", git_dir, pin.commit, tree, pin.tree));
  const std::string tagged = rev_parse(pin.tag + "^{commit}");
  if (!tagged.empty() && tagged != pin.commit)
    throw UsageError(
        fmt::format("git directory {}: tag {} points at {}, the pin says {}", git_dir, pin.tag, tagged, pin.commit));
}

SourceProvenance export_pristine_source(const Pin& pin, const BuildOptions& options, const std::string& cache_dir,
                                        const std::string& destination) {
  fs::create_directories(fs::path(destination).parent_path());
  for (const std::string& tarball : options.source_tarballs) {
    if (sha256_file_hex(tarball) != pin.tarball_sha256) continue;
    unpack_tarball(pin, tarball, destination);
    return {"tarball", fmt::format("{} (SHA-256 {} matches the pin)", tarball, pin.tarball_sha256)};
  }
  if (!options.git_dir.empty()) {
    verify_git_dir(pin, options.git_dir);
    const std::string archive = destination + ".tar";
    run_or_throw({"git", "--git-dir", options.git_dir, "archive", "--format=tar",
                  "--prefix=" + pin.tarball_prefix + "/", "-o", archive, pin.commit});
    const std::string staging = destination + ".unpack";
    fs::remove_all(staging);
    fs::create_directories(staging);
    run_or_throw({"tar", "-xf", archive, "-C", staging});
    fs::rename(fs::path(staging) / pin.tarball_prefix, destination);
    fs::remove_all(staging);
    fs::remove(archive);
    return {"git", fmt::format("{} at commit {} (tree {} verified)", options.git_dir, pin.commit, pin.tree)};
  }
  if (!options.allow_download)
    throw UsageError(
        fmt::format("no source for NCCL {}: give --source-tarball (SHA-256 {}) or --git-dir, "
                    "or allow the download of {}",
                    pin.version, pin.tarball_sha256, pin.tarball_url));
  const std::string download = (fs::path(cache_dir) / "downloads" / (pin.tarball_prefix + ".tar.gz")).string();
  fs::create_directories(fs::path(download).parent_path());
  if (!fs::exists(download) || sha256_file_hex(download) != pin.tarball_sha256) {
    ProcessResult r = run_process({"curl", "-fsSL", "--retry", "2", "-o", download, pin.tarball_url});
    if (r.exit_status != 0)
      throw std::runtime_error(fmt::format("cannot download {} (offline?): {}\nuse --source-tarball or --git-dir",
                                           pin.tarball_url, r.output));
  }
  const std::string hash = sha256_file_hex(download);
  if (hash != pin.tarball_sha256)
    throw UsageError(
        fmt::format("downloaded {} has SHA-256 {}, the pin says {} ({}); build from --git-dir, which "
                    "is verified by commit and tree id",
                    pin.tarball_url, hash, pin.tarball_sha256, pin.tarball_sha256_method));
  unpack_tarball(pin, download, destination);
  return {"download", fmt::format("{} (SHA-256 {} matches the pin)", pin.tarball_url, hash)};
}

void copy_tree(const std::string& from, const std::string& to) {
  if (!fs::is_directory(from)) throw UsageError(from + " is not a directory");
  fs::create_directories(fs::path(to).parent_path());
  run_or_throw({"cp", "-a", "--", from, to});
}

void retarget_build_tree(const std::string& build_dir, const std::string& old_path, const std::string& new_path) {
  if (old_path == new_path) return;
  for (const auto& entry : fs::recursive_directory_iterator(build_dir)) {
    if (!entry.is_regular_file() || entry.is_symlink()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".d" && ext != ".dep" && ext != ".rules" && ext != ".pc") continue;
    struct stat before;
    if (stat(entry.path().c_str(), &before) != 0) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::string content = text.str();
    bool changed = false;
    for (size_t at = content.find(old_path); at != std::string::npos;
         at = content.find(old_path, at + new_path.size())) {
      content.replace(at, old_path.size(), new_path);
      changed = true;
    }
    if (!changed) continue;
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << content;
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    utimensat(AT_FDCWD, entry.path().c_str(), times, 0);
  }
}

}  // namespace hangbench::nccl
