// `hangbench nccl build|list|inspect|fetch|slim|shim`: option parsing only; the work is
// in harness/src/nccl (nccl_commands.hpp), every subcommand through guarded().
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/model.hpp"
#include "hangbench/nccl_commands.hpp"

namespace hangbench::cli {
namespace {

struct BuildArgs {
  nccl::BuildOptions options;
  std::vector<std::string> adopt;
  std::string recipe_dir;
  bool offline = false, json = false;
  bool base_given = false, name_given = false;
};

void add_build(CLI::App& nccl_app, int& rc) {
  auto args = std::make_shared<BuildArgs>();
  auto* sub = nccl_app.add_subcommand(
      "build", "Build (or find cached) pinned NCCL variants, or a vendor's patch on one of them (--patch)");
  sub->add_option("--variant", args->options.variants, "Variant to build (repeatable; default: all)");
  sub->add_option("--patch", args->options.patched.patches,
                  "A patch (patch -p1, path from the working directory) to build on --base as its own variant; "
                  "repeat for several, applied in order")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* base =
      sub->add_option("--base", args->options.patched.base, "The variant --patch starts from")->capture_default_str();
  auto* name = sub->add_option("--name", args->options.patched.name,
                               "Name of the --patch variant (default: BASE+<patch file name without .patch>)");
  sub->add_option("--source-tarball", args->options.source_tarballs,
                  "Local NCCL source tarball, verified by SHA-256 against the pins (repeatable)")
      ->check(CLI::ExistingFile);
  sub->add_option("--git-dir", args->options.git_dir, "Local NCCL git directory, verified by commit and tree id");
  sub->add_option("--adopt", args->adopt,
                  "NAME=SRC_DIR:BUILD_DIR: take an existing patched source tree and its NCCL BUILDDIR "
                  "into the cache instead of building it (repeatable)");
  sub->add_option("--gencode", args->options.gencode, "NVCC_GENCODE (default from variants.toml: sm_90)");
  sub->add_option("--cache", args->options.cache_dir, "Cache directory (default $HANGBENCH_NCCL_CACHE or .cache/nccl)");
  sub->add_option("--cuda-home", args->options.cuda_home, "CUDA toolkit")->capture_default_str();
  sub->add_option("--jobs,-j", args->options.jobs, "Parallel make jobs")->capture_default_str();
  sub->add_option("--recipe", args->recipe_dir,
                  "Directory with pins.toml and variants.toml (default third_party/nccl)");
  sub->add_flag("--strip", args->options.strip, "Also write a stripped copy (lib/stripped/libnccl.so.2)");
  sub->add_flag("--offline", args->offline, "Never download the pinned tarball");
  sub->add_flag("--json", args->json, "Summary as JSON");
  set_help(sub, {{{"hangbench nccl build --strip", "the four pinned variants, each with a stripped copy"},
                  {"hangbench nccl build --variant 2.17.1 --source-tarball nccl-2.17.1-1.tar.gz --offline",
                   "one variant from a tarball already here (checked against the pinned SHA-256)"},
                  {"hangbench nccl build --base 2.17.1 --patch acme-teardown.patch --name acme-2.17.1",
                   "a vendor's patch on the pinned 2.17.1: a variant of its own (relinks when it changes no "
                   "device code); judge it with: hangbench validate --patch acme-teardown.patch"}},
                 {{0, "built, or found in the cache"},
                  {2,
                   "a recipe, option or verification error, a --patch that is not a file or does not apply "
                   "(the message names the file)"},
                  {3, "a tool or make failed (see the entry's make.log)"}},
                 "docs/nccl.md"});
  sub->callback([args, base, name, &rc] {
    rc = guarded("nccl build", [&] {
      if (!args->options.patched.requested() && (base->count() > 0 || name->count() > 0))
        throw UsageError("--base and --name go with --patch FILE (the patch to build)");
      for (const std::string& text : args->adopt) args->options.adoptions.push_back(nccl::parse_adoption(text));
      args->options.allow_download = !args->offline;
      return nccl::build_command(args->options, args->recipe_dir, args->json, std::cout, std::cerr);
    });
  });
}

void add_list(CLI::App& nccl_app, int& rc) {
  auto cache = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* sub = nccl_app.add_subcommand("list", "Show the NCCL cache: pinned builds and vendor wheels");
  sub->add_option("--cache", *cache, "Cache directory");
  sub->add_flag("--json", *json, "Manifests as JSON");
  set_help(sub, {{{"hangbench nccl list", "every pinned build and vendor wheel in the cache"},
                  {"hangbench nccl list --cache /data/nccl --json", "another cache's manifests, for scripts"}},
                 {{0, "listed (an empty cache too)"}, {2, "usage error"}, {3, "the cache cannot be read"}},
                 "docs/nccl.md"});
  sub->callback([cache, json, &rc] {
    rc = guarded("nccl list", [&] { return nccl::list_command(*cache, *json, std::cout, std::cerr); });
  });
}

void add_inspect(CLI::App& nccl_app, int& rc) {
  auto libraries = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  auto no_load = std::make_shared<bool>(false);
  auto require_fix = std::make_shared<bool>(false);
  auto* sub = nccl_app.add_subcommand(
      "inspect",
      "Version and teardown-fix verdict of any libnccl.so. Loads the library (dlopen and ncclGetVersion in a forked "
      "child, bounded at 20 s) unless --no-load, which reads the version string instead");
  sub->add_option("LIB", *libraries, "NCCL shared libraries")->required();
  sub->add_flag("--json", *json, "Result as JSON (schema hangbench.nccl-inspect/1)");
  sub->add_flag("--no-load", *no_load, "Do not dlopen the library (read the version string instead)");
  sub->add_flag("--require-fix", *require_fix,
                "Exit 1 when a library lacks the teardown fix, 3 when the file cannot tell");
  set_help(sub, {{{"hangbench nccl inspect /usr/lib/x86_64-linux-gnu/libnccl.so.2",
                   "its version and whether ncclSocketClose calls shutdown() (the teardown fix)"},
                  {"hangbench nccl inspect libnccl.so.2 --require-fix", "exit 1 when the fix is missing (for CI)"},
                  {"hangbench nccl inspect libnccl.so.2 --no-load --json", "without dlopen, as JSON"}},
                 {{0, "inspected (--require-fix: every library has the fix)"},
                  {1, "--require-fix: a library lacks the teardown fix"},
                  {2, "not an NCCL library (not ELF, no ncclGetVersion), or bad usage"},
                  {3, "--require-fix: the file cannot tell"}},
                 "docs/nccl.md"});
  sub->callback([=, &rc] {
    rc = guarded("nccl inspect", [&] {
      return nccl::inspect_command(*libraries, *json, !*no_load, std::cout, std::cerr, *require_fix);
    });
  });
}

void add_fetch(CLI::App& nccl_app, int& rc) {
  struct FetchArgs {
    nccl::VendorRequest request;
    bool json = false;
  };
  auto args = std::make_shared<FetchArgs>();
  auto* sub = nccl_app.add_subcommand("fetch",
                                      "Take NVIDIA's NCCL wheels (nvidia-nccl-cuXX, via pip or a local "
                                      "file) into the cache");
  sub->add_option("VERSION", args->request.versions, "Package versions to download from PyPI (e.g. 2.17.1)");
  sub->add_option("--cuda", args->request.cuda, "CUDA major version of the package: 11, 12 or 13")
      ->capture_default_str();
  sub->add_option("--wheel", args->request.wheels, "A wheel file already here (offline; repeatable)");
  sub->add_option("--cache", args->request.cache_dir, "Cache directory (default $HANGBENCH_NCCL_CACHE or .cache/nccl)");
  sub->add_option("--python", args->request.python, "Python whose pip downloads")->capture_default_str();
  sub->add_flag("--json", args->json, "Manifests as JSON");
  set_help(sub, {{{"hangbench nccl fetch 2.18.1 2.21.5 --cuda 12", "two of NVIDIA's wheels into the cache"},
                  {"hangbench nccl fetch --wheel nvidia_nccl_cu12-2.18.1-py3-none-manylinux1_x86_64.whl",
                   "a wheel already here, offline"}},
                 {{0, "fetched, or already in the cache"},
                  {2,
                   "an unknown version (the message lists the index's), a bad --cuda, a file that is not an NCCL "
                   "wheel"},
                  {3, "pip could not reach the index, or another tool failed"}},
                 "docs/nccl.md"});
  sub->callback([args, &rc] {
    rc = guarded("nccl fetch", [&] { return nccl::fetch_command(args->request, args->json, std::cout, std::cerr); });
  });
}

void add_slim(CLI::App& nccl_app, int& rc) {
  struct SlimArgs {
    std::string library, output, entry_out;
    uint32_t keep_sm = 90;
    bool json = false;
  };
  auto args = std::make_shared<SlimArgs>();
  auto* sub = nccl_app.add_subcommand("slim",
                                      "Copy of a libnccl.so with only one GPU architecture's device code, "
                                      "for transport (size and host code unchanged)");
  sub->add_option("LIB", args->library, "NCCL shared library")->required()->check(CLI::ExistingFile);
  sub->add_option("--out", args->output, "Slimmed copy to write (and FILE.slim.json beside it)");
  sub->add_option("--entry-out", args->entry_out,
                  "For a library in a cache entry: write a slimmed copy of the entry to DIR "
                  "(lib/libnccl.so.2 and manifest.json)");
  sub->add_option("--keep-sm", args->keep_sm, "Compute capability whose SASS is kept")->capture_default_str();
  sub->add_flag("--json", args->json, "Result as JSON");
  set_help(sub, {{{"hangbench nccl slim libnccl.so.2 --out slim/libnccl.so.2",
                   "a copy with only sm_90's device code (and slim/libnccl.so.2.slim.json)"},
                  {"hangbench nccl slim .cache/nccl/vendor/E/lib/libnccl.so.2 --entry-out pack/E",
                   "a cache entry's slimmed copy, manifest included, for the GPU machine"}},
                 {{0, "written"},
                  {2,
                   "not ELF, no fatbin, --out naming the library itself, a library outside the cache with "
                   "--entry-out"},
                  {3, "the copy cannot be written"}},
                 "docs/nccl.md"});
  sub->callback([args, &rc] {
    rc = guarded("nccl slim", [&] {
      return nccl::slim_command(args->library, args->output, args->entry_out, args->keep_sm, args->json, std::cout,
                                std::cerr);
    });
  });
}

void add_shim(CLI::App& nccl_app, int& rc) {
  struct ShimArgs {
    std::string torch_lib, nccl_lib, output = "libnccl_compat_shim.so";
    int error_code = 5;
  };
  auto args = std::make_shared<ShimArgs>();
  auto* sub = nccl_app.add_subcommand("shim", "Build the compat shim for a libtorch over an older NCCL");
  sub->add_option("--torch-lib", args->torch_lib, "libtorch_cuda.so (its undefined nccl* symbols)")->required();
  sub->add_option("--nccl", args->nccl_lib, "The NCCL library it will run over")->required();
  sub->add_option("-o,--output", args->output, "Shim library to write")->capture_default_str();
  sub->add_option("--error-code", args->error_code,
                  "ncclResult_t the stubs return (5 ncclInvalidUsage, 3 ncclInternalError)")
      ->capture_default_str();
  set_help(sub, {{{"hangbench nccl shim --torch-lib libtorch_cuda.so --nccl libnccl.so.2",
                   "libnccl_compat_shim.so: a stub for each nccl* symbol the libtorch needs and the NCCL lacks"}},
                 {{0, "the shim was built"}, {2, "usage error"}, {3, "nm or the compiler failed"}},
                 "docs/nccl.md"});
  sub->callback([args, &rc] {
    rc = guarded("nccl shim", [&] {
      return nccl::shim_command(args->torch_lib, args->nccl_lib, args->output, args->error_code, std::cout, std::cerr);
    });
  });
}

}  // namespace

void add_nccl_command(CLI::App& app, int& rc) {
  auto* sub = app.add_subcommand("nccl", "Pinned NCCL builds, inspection and the compat shim");
  sub->require_subcommand(1);
  add_build(*sub, rc);
  add_list(*sub, rc);
  add_inspect(*sub, rc);
  add_shim(*sub, rc);
  add_slim(*sub, rc);
  add_fetch(*sub, rc);
  set_help(
      sub,
      {{{"hangbench nccl build --strip", "the four pinned variants (2.17.1, 2.18.1, each with and without the fix)"},
        {"hangbench nccl fetch 2.18.1 2.21.5 --cuda 12", "NVIDIA's wheels into the same cache"},
        {"hangbench nccl inspect libnccl.so.2 --require-fix", "exit 1 when ncclSocketClose lacks shutdown()"},
        {"hangbench nccl list", "what the cache holds"}},
       {{0, "done (inspect --require-fix: every library has the fix)"},
        {1, "inspect --require-fix: a library lacks the teardown fix"},
        {2, "usage or configuration error: the message names the file and line"},
        {3, "a build, download or tool failed (inspect --require-fix: the file cannot tell)"}},
       "docs/nccl.md"});
}

}  // namespace hangbench::cli
