// Pinned, patched, cached NCCL builds (`hangbench nccl build|list|shim`).
// Owned by harness/src/nccl. The recipe lives in third_party/nccl/*.toml.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "hangbench/errors.hpp"

namespace hangbench::nccl {

// Bad recipe, option or source that fails verification: exit code 2.
using UsageError = hangbench::UsageError;
// Everything else that goes wrong (a tool fails, make fails) is a
// std::runtime_error: exit code 3.

struct Pin {
  std::string version, tag, commit, tree;
  std::string tarball_url, tarball_prefix, tarball_sha256, tarball_sha256_method;
};

struct Variant {
  std::string name;
  std::string pin;                   // version of the pin; resolved through `base`
  std::string base;                  // variant whose trees this one starts from ("" = pristine source)
  std::vector<std::string> patches;  // its own patches, relative to the recipe root
  std::string description;
};

struct Recipe {
  std::string root;  // patch paths are relative to this directory
  std::string default_gencode;
  std::vector<Pin> pins;
  std::vector<Variant> variants;
  const Pin& pin(const std::string& version) const;       // throws UsageError
  const Variant& variant(const std::string& name) const;  // throws UsageError
  // Every patch from the pristine source up to `name`, base patches first.
  std::vector<std::string> patch_chain(const std::string& name) const;
};

// Parses and cross-checks both files; throws UsageError with the file name.
Recipe load_recipe(const std::string& pins_toml, const std::string& variants_toml, const std::string& root);
// <HANGBENCH_SOURCE_DIR>/third_party/nccl/{pins,variants}.toml.
Recipe load_default_recipe();
// $HANGBENCH_NCCL_CACHE, else <HANGBENCH_SOURCE_DIR>/.cache/nccl.
std::string default_cache_dir();

// An existing source tree + NCCL BUILDDIR (e.g. made by hand) taken into the
// cache instead of a full build.
struct Adoption {
  std::string variant, source_dir, build_dir;
};
// Parses "NAME=SRC_DIR:BUILD_DIR"; throws UsageError.
Adoption parse_adoption(const std::string& text);

// A variant made on the command line (`nccl build --base 2.17.1 --patch FILE --name NAME`):
// a variant of the recipe with a vendor's patches on top, built like a derived variant.
struct PatchedVariant {
  std::string base = "2.17.1";       // the recipe's variant it starts from
  std::vector<std::string> patches;  // as given: relative to the working directory
  std::string name;                  // "" = "<base>+<the first patch's file name without .patch/.diff>"
  bool requested() const { return !patches.empty(); }
};
// Adds `patched` to `recipe` (its patches as absolute paths) and returns its name; throws
// UsageError when the base is unknown, a patch is not a file, or the name is taken or not plain.
std::string add_patched_variant(Recipe& recipe, const PatchedVariant& patched);
// `recipe_dir` "" = the repository's third_party/nccl with patches under the repository root;
// else <recipe_dir>/{pins,variants}.toml with patches two levels above.
Recipe load_recipe_dir(const std::string& recipe_dir);

struct BuildOptions {
  std::vector<std::string> variants;         // empty: all of the recipe's
  std::vector<std::string> source_tarballs;  // local tarballs, matched to pins by SHA-256
  std::string git_dir;                       // local NCCL git directory, verified by commit and tree id
  bool allow_download = true;                // fetch the pinned tarball URL when nothing local fits
  std::vector<Adoption> adoptions;
  std::string gencode;    // "" = recipe default
  std::string cache_dir;  // "" = default_cache_dir()
  std::string cuda_home = "/usr/local/cuda";
  std::string cxx = "g++";
  int jobs = 2;
  bool strip = false;      // also write lib/stripped/libnccl.so.2
  PatchedVariant patched;  // requested(): build this one (and what it needs) instead of `variants`
};

struct BuiltVariant {
  std::string name, cache_key, output_dir, library;
  bool was_cached = false;              // manifest already there, nothing done
  std::string how;                      // "full build", "relinked from 2.17.1", "adopted", "cached"
  std::vector<std::string> recompiled;  // objects make rebuilt (relative to the build dir)
  double seconds = 0;
};

using Progress = std::function<void(const std::string&)>;

// Builds (or finds in the cache) each requested variant, its bases first.
std::vector<BuiltVariant> build_variants(const Recipe& recipe, const BuildOptions& options, const Progress& progress);
// The recipe of `recipe_dir` (load_recipe_dir) with options.patched added when requested,
// built as build_variants() does: options.variants, then the patched variant (only it when
// options.variants is empty; its base is built on the way). Returns those, the patched one last.
std::vector<BuiltVariant> build_with_patched(const std::string& recipe_dir, BuildOptions options,
                                             const Progress& progress);

// The cache key of a variant: SHA-256 over the pinned commit, each patch's
// SHA-256, the gencode and the CUDA version line.
std::string cache_key(const Recipe& recipe, const std::string& variant, const std::string& gencode,
                      const std::string& cuda_version);
// "Cuda compilation tools, release 13.0, V13.0.88" from <cuda_home>/bin/nvcc --version.
std::string cuda_version_line(const std::string& cuda_home);

// Manifests of every built variant in the cache, sorted by variant name.
std::vector<nlohmann::json> list_built(const std::string& cache_dir);
std::string format_built_table(const std::vector<nlohmann::json>& manifests);

// The compat shim: entry points that `torch_lib` imports and `nccl_lib` lacks.
std::vector<std::string> missing_nccl_symbols(const std::string& torch_lib, const std::string& nccl_lib);
std::string compat_shim_source(const std::vector<std::string>& missing, const std::string& torch_lib,
                               const std::string& nccl_lib, int error_code);
// Writes <output>.c beside `output` and compiles it with $CC (or cc) into a
// shared library whose SONAME is libnccl_compat_shim.so. Returns the names.
std::vector<std::string> build_compat_shim(const std::string& torch_lib, const std::string& nccl_lib,
                                           const std::string& output, int error_code = 5);

}  // namespace hangbench::nccl
