// Pristine NCCL source for a pin, from a verified local tarball, a verified
// local git directory, or the pinned download; and copies of source/build
// trees that keep make's view of what is up to date.
#pragma once

#include <string>
#include <vector>

#include "hangbench/nccl_build.hpp"

namespace hangbench::nccl {

struct SourceProvenance {
  std::string kind;    // "tarball", "git", "download"
  std::string detail;  // what was verified, in words
};

// Unpacks the pinned source into `destination` (which must not exist yet).
// Throws UsageError when a named source fails verification or none fits.
SourceProvenance export_pristine_source(const Pin& pin, const BuildOptions& options, const std::string& cache_dir,
                                        const std::string& destination);

// Returns which pin a tarball is, by SHA-256; throws UsageError when none.
const Pin& pin_for_tarball(const std::vector<Pin>& pins, const std::string& tarball);

// Verifies that `git_dir` holds the pinned commit with the pinned tree
// (and that the tag, if present, points at it); throws UsageError.
void verify_git_dir(const Pin& pin, const std::string& git_dir);

// cp -a `from` to `to`, then rewrites the absolute path `from_build` to
// `to_build` in the build tree's text files (make's .d/.dep/.rules), putting
// back their modification times so make sees nothing new.
void copy_tree(const std::string& from, const std::string& to);
void retarget_build_tree(const std::string& build_dir, const std::string& old_path, const std::string& new_path);

}  // namespace hangbench::nccl
