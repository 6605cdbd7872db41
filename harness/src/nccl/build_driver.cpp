// `hangbench nccl build`: each variant gets a source + build tree keyed by
// what goes into it; derived variants start from a copy of their base's
// trees so make recompiles only what their patches touch.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include "hangbench/nccl_build.hpp"
#include "hangbench/provenance.hpp"
#include "nccl/json_file.hpp"
#include "nccl/patching.hpp"
#include "nccl/process.hpp"
#include "nccl/sha256.hpp"
#include "nccl/source_tree.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {
namespace {

constexpr const char* kTreeMarker = "tree.json";  // written once make succeeded in a tree

struct Context {
  const Recipe& recipe;
  const BuildOptions& options;
  const Progress& progress;
  std::string cache_dir, gencode, cuda_version, compiler;
  std::map<std::string, BuiltVariant> done;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string tree_dir(const Context& ctx, const std::string& key) {
  return (fs::path(ctx.cache_dir) / "trees" / key.substr(0, 16)).string();
}

std::string output_dir(const Context& ctx, const std::string& name, const std::string& key) {
  return (fs::path(ctx.cache_dir) / "variants" / (name + "-" + key.substr(0, 12))).string();
}

void write_json(const fs::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

std::map<std::string, fs::file_time_type> object_times(const std::string& build_dir) {
  std::map<std::string, fs::file_time_type> times;
  if (!fs::exists(build_dir)) return times;
  for (const auto& e : fs::recursive_directory_iterator(build_dir))
    if (e.is_regular_file() && e.path().extension() == ".o")
      times[fs::relative(e.path(), build_dir).string()] = e.last_write_time();
  return times;
}

std::string nccl_version_of_tree(const std::string& src) {
  std::ifstream in(fs::path(src) / "makefiles" / "version.mk");
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(in, line);) {
    const auto assign = line.find(":=");
    if (assign == std::string::npos) continue;
    auto strip = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
      return s;
    };
    fields[strip(line.substr(0, assign))] = strip(line.substr(assign + 2));
  }
  return fields["NCCL_MAJOR"] + "." + fields["NCCL_MINOR"] + "." + fields["NCCL_PATCH"];
}

// Makes sure an adopted tree is what the variant says it is.
std::string verify_adoption(Context& ctx, const Variant& v, const Adoption& a) {
  const Pin& pin = ctx.recipe.pin(v.pin);
  if (!fs::is_directory(a.source_dir) || !fs::is_directory(a.build_dir))
    throw UsageError(fmt::format("--adopt {}: {} or {} is not a directory", v.name, a.source_dir, a.build_dir));
  const std::string version = nccl_version_of_tree(a.source_dir);
  if (version != pin.version)
    throw UsageError(
        fmt::format("--adopt {}: makefiles/version.mk says {}, the pin is {}", v.name, version, pin.version));
  if (!fs::exists(fs::path(a.build_dir) / "lib" / "libnccl.so.2"))
    throw UsageError(fmt::format("--adopt {}: {} has no lib/libnccl.so.2 (build not finished?)", v.name, a.build_dir));
  for (const std::string& patch : ctx.recipe.patch_chain(v.name))
    if (!patch_is_applied(a.source_dir, (fs::path(ctx.recipe.root) / patch).string()))
      throw UsageError(fmt::format("--adopt {}: patch {} is not applied in {}", v.name, patch, a.source_dir));
  if (ctx.options.git_dir.empty())
    return fmt::format("adopted {}: version.mk and every patch checked; commit NOT verified (no --git-dir)",
                       a.source_dir);
  // Rebuild the expected tree from the pinned commit and compare it file by file.
  const std::string expected = (fs::path(ctx.cache_dir) / "tmp" / ("adopt-check-" + v.name)).string();
  fs::remove_all(expected);
  fs::create_directories(fs::path(expected).parent_path());
  BuildOptions git_only;
  git_only.git_dir = ctx.options.git_dir;
  git_only.allow_download = false;
  export_pristine_source(pin, git_only, ctx.cache_dir, expected);
  for (const std::string& patch : ctx.recipe.patch_chain(v.name))
    apply_patch(expected, (fs::path(ctx.recipe.root) / patch).string());
  ProcessResult diff = run_process({"diff", "-r", "-q", expected, a.source_dir});
  fs::remove_all(expected);
  if (diff.exit_status != 0)
    throw UsageError(fmt::format("--adopt {}: {} differs from commit {} + patches:\n{}", v.name, a.source_dir,
                                 pin.commit, diff.output));
  return fmt::format("adopted {}: identical to commit {} (tree {}) + patches", a.source_dir, pin.commit, pin.tree);
}

void run_make(Context& ctx, const Variant& v, const std::string& tree) {
  const std::string src = tree + "/src", build = fs::absolute(tree + "/build").string();
  const std::vector<std::string> command = {"make",
                                            "-C",
                                            src,
                                            "-j" + std::to_string(ctx.options.jobs),
                                            "src.build",
                                            "BUILDDIR=" + build,
                                            "CUDA_HOME=" + ctx.options.cuda_home,
                                            "NVCC_GENCODE=" + ctx.gencode,
                                            "CXX=" + ctx.options.cxx};
  std::ofstream log(tree + "/make.log", std::ios::app);
  log << "$ " << describe_command(command) << "\n";
  int compiled = 0;
  ProcessResult r = run_process(command, "", [&](const std::string& line) {
    log << line << "\n";
    if (line.rfind("Compiling", 0) == 0 && (++compiled % 20 == 1))
      ctx.progress(fmt::format("{}: compiling ({} so far) {}", v.name, compiled, line.substr(line.rfind(' ') + 1)));
    if (line.rfind("Linking", 0) == 0) ctx.progress(fmt::format("{}: {}", v.name, line));
  });
  if (r.exit_status != 0)
    throw std::runtime_error(
        fmt::format("{}: make failed with status {}; see {}/make.log", v.name, r.exit_status, tree));
}

BuiltVariant package(Context& ctx, const Variant& v, const std::string& key, const std::string& tree,
                     const nlohmann::json& tree_record, BuiltVariant built) {
  const fs::path out = output_dir(ctx, v.name, key);
  const fs::path staging = out.string() + ".tmp";
  fs::remove_all(staging);
  fs::create_directories(staging / "lib");
  const fs::path library = fs::canonical(fs::path(tree) / "build" / "lib" / "libnccl.so.2");
  fs::copy_file(library, staging / "lib" / "libnccl.so.2");
  nlohmann::json manifest = tree_record;
  manifest["variant"] = v.name;
  manifest["description"] = v.description;
  manifest["library"] = "lib/libnccl.so.2";
  manifest["library_sha256"] = sha256_file_hex((staging / "lib" / "libnccl.so.2").string());
  manifest["built_from"] = built.how;
  manifest["recompiled_objects"] =
      built.recompiled.size() > 20 ? nlohmann::json(built.recompiled.size()) : nlohmann::json(built.recompiled);
  if (ctx.options.strip) {
    fs::create_directories(staging / "lib" / "stripped");
    const std::string stripped = (staging / "lib" / "stripped" / "libnccl.so.2").string();
    ProcessResult r = run_process({"strip", "-o", stripped, (staging / "lib" / "libnccl.so.2").string()});
    if (r.exit_status != 0) throw std::runtime_error("strip failed: " + r.output);
    manifest["stripped_library"] = "lib/stripped/libnccl.so.2";
    manifest["stripped_library_sha256"] = sha256_file_hex(stripped);
  }
  manifest["packaged_at"] = utc_now_iso8601();
  write_json(staging / "manifest.json", manifest);
  fs::remove_all(out);
  fs::rename(staging, out);
  built.output_dir = out.string();
  built.library = (out / "lib" / "libnccl.so.2").string();
  return built;
}

bool output_is_current(const fs::path& out, bool need_stripped) {
  const nlohmann::json m = read_json(out / "manifest.json");
  const fs::path lib = out / "lib" / "libnccl.so.2";
  if (m.is_discarded() || !fs::exists(lib) || m.value("library_sha256", "") != sha256_file_hex(lib.string()))
    return false;
  return !need_stripped || m.contains("stripped_library");
}

nlohmann::json patch_records(const Context& ctx, const std::string& variant) {
  nlohmann::json patches = nlohmann::json::array();
  for (const std::string& patch : ctx.recipe.patch_chain(variant)) {
    const std::string path = (fs::path(ctx.recipe.root) / patch).string();
    patches.push_back({{"path", patch}, {"sha256", sha256_file_hex(path)}, {"files", patched_files(path)}});
  }
  return patches;
}

BuiltVariant build_one(Context& ctx, const std::string& name, bool need_tree) {
  if (auto it = ctx.done.find(name); it != ctx.done.end()) return it->second;
  const Variant& v = ctx.recipe.variant(name);
  const Pin& pin = ctx.recipe.pin(v.pin);
  const std::string key = cache_key(ctx.recipe, name, ctx.gencode, ctx.cuda_version);
  const std::string tree = tree_dir(ctx, key);
  const fs::path marker = fs::path(tree) / kTreeMarker;
  const fs::path out = output_dir(ctx, name, key);
  BuiltVariant built;
  built.name = name;
  built.cache_key = key;
  built.output_dir = out.string();
  built.library = (out / "lib" / "libnccl.so.2").string();
  const bool tree_ready = fs::exists(marker);
  if (output_is_current(out, ctx.options.strip) && (tree_ready || !need_tree)) {
    built.was_cached = true;
    built.how = "cached";
    ctx.progress(fmt::format("{}: up to date in {}", name, out.string()));
    return ctx.done[name] = built;
  }
  const auto started = std::chrono::steady_clock::now();
  nlohmann::json record;
  if (tree_ready) {
    record = read_json(marker);
    built.how = "re-made in its cached tree";
  } else {
    fs::remove_all(tree);
    fs::create_directories(fs::path(tree).parent_path());
    const Adoption* adoption = nullptr;
    for (const Adoption& a : ctx.options.adoptions)
      if (a.variant == name) adoption = &a;
    std::string source_note;
    if (adoption) {
      source_note = verify_adoption(ctx, v, *adoption);
      ctx.progress(fmt::format("{}: {}", name, source_note));
      copy_tree(adoption->source_dir, tree + "/src");
      copy_tree(adoption->build_dir, tree + "/build");
      retarget_build_tree(tree + "/build", fs::absolute(adoption->build_dir).lexically_normal().string(),
                          fs::absolute(tree + "/build").string());
      built.how = "adopted";
      record["source"] = {{"kind", "adopted"}, {"detail", source_note}};
    } else if (!v.base.empty()) {
      const BuiltVariant base = build_one(ctx, v.base, /*need_tree=*/true);
      const std::string base_tree = tree_dir(ctx, base.cache_key);
      ctx.progress(
          fmt::format("{}: copying the trees of {} and applying {} patch(es)", name, v.base, v.patches.size()));
      copy_tree(base_tree + "/src", tree + "/src");
      copy_tree(base_tree + "/build", tree + "/build");
      retarget_build_tree(tree + "/build", fs::absolute(base_tree + "/build").string(),
                          fs::absolute(tree + "/build").string());
      bool only_host = true;
      for (const std::string& patch : v.patches) {
        const std::string path = (fs::path(ctx.recipe.root) / patch).string();
        only_host = only_host && host_only(patched_files(path));
        apply_patch(tree + "/src", path);
      }
      built.how = (only_host ? "relinked from " : "partly rebuilt from ") + v.base;
      record["source"] = read_json(fs::path(base_tree) / kTreeMarker).value("source", nlohmann::json::object());
      record["source"]["derived_from"] = v.base;
    } else {
      ctx.progress(fmt::format("{}: exporting NCCL {} ({})", name, pin.tag, pin.commit));
      const SourceProvenance provenance = export_pristine_source(pin, ctx.options, ctx.cache_dir, tree + "/src");
      for (const std::string& patch : ctx.recipe.patch_chain(name))
        apply_patch(tree + "/src", (fs::path(ctx.recipe.root) / patch).string());
      ctx.progress(fmt::format("{}: full build (device code too; about 20 minutes on 2 cores for sm_90)", name));
      built.how = "full build";
      record["source"] = {{"kind", provenance.kind}, {"detail", provenance.detail}};
    }
    record["version"] = pin.version;
    record["tag"] = pin.tag;
    record["commit"] = pin.commit;
    record["tree"] = pin.tree;
    record["patches"] = patch_records(ctx, name);
    record["gencode"] = ctx.gencode;
    record["cuda_version"] = ctx.cuda_version;
    record["compiler"] = ctx.compiler;
    record["cache_key"] = key;
  }
  const auto before = object_times(tree + "/build");
  ctx.progress(fmt::format("{}: make ({})", name, built.how));
  run_make(ctx, v, tree);
  for (const auto& [object, time] : object_times(tree + "/build")) {
    auto old = before.find(object);
    if (old == before.end() || old->second != time) built.recompiled.push_back(object);
  }
  built.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  record["build_seconds"] = built.seconds;
  record["built_at"] = utc_now_iso8601();
  write_json(marker, record);
  built = package(ctx, v, key, tree, record, built);
  ctx.progress(fmt::format("{}: {} in {:.1f} s, {} object(s) recompiled -> {}", name, built.how, built.seconds,
                           built.recompiled.size(), built.library));
  return ctx.done[name] = built;
}

}  // namespace

std::string cuda_version_line(const std::string& cuda_home) {
  const std::string nvcc = (fs::path(cuda_home) / "bin" / "nvcc").string();
  if (!fs::exists(nvcc)) throw UsageError("no nvcc at " + nvcc + " (set --cuda-home)");
  ProcessResult r = run_process({nvcc, "--version"});
  const auto at = r.output.find("release ");
  if (r.exit_status != 0 || at == std::string::npos)
    throw std::runtime_error(nvcc + " --version gave no release line:\n" + r.output);
  const auto line_start = r.output.rfind('\n', at);
  return first_line(r.output.substr(line_start == std::string::npos ? 0 : line_start + 1));
}

std::string cache_key(const Recipe& recipe, const std::string& variant, const std::string& gencode,
                      const std::string& cuda_version) {
  const Variant& v = recipe.variant(variant);
  std::string material = "commit " + recipe.pin(v.pin).commit + "\n";
  for (const std::string& patch : recipe.patch_chain(variant))
    material += "patch " + sha256_file_hex((fs::path(recipe.root) / patch).string()) + "\n";
  material += "gencode " + gencode + "\ncuda " + cuda_version + "\n";
  return sha256_hex(material);
}

std::vector<BuiltVariant> build_variants(const Recipe& recipe, const BuildOptions& options, const Progress& progress) {
  if (options.jobs < 1) throw UsageError("--jobs must be at least 1");
  Context ctx{recipe,
              options,
              progress,
              options.cache_dir.empty() ? default_cache_dir() : options.cache_dir,
              options.gencode.empty() ? recipe.default_gencode : options.gencode,
              "",
              "",
              {}};
  ctx.cache_dir = fs::absolute(ctx.cache_dir).lexically_normal().string();
  for (const std::string& tarball : options.source_tarballs) pin_for_tarball(recipe.pins, tarball);
  for (const Adoption& a : options.adoptions) recipe.variant(a.variant);
  ctx.cuda_version = cuda_version_line(options.cuda_home);
  ctx.compiler = first_line(run_process({options.cxx, "--version"}).output);
  std::vector<std::string> names = options.variants;
  if (names.empty())
    for (const Variant& v : recipe.variants) names.push_back(v.name);
  std::vector<BuiltVariant> results;
  for (const std::string& name : names) {
    recipe.variant(name);
    progress(
        fmt::format("{}: cache key {}", name, cache_key(recipe, name, ctx.gencode, ctx.cuda_version).substr(0, 16)));
    results.push_back(build_one(ctx, name, /*need_tree=*/false));
  }
  return results;
}

std::vector<BuiltVariant> build_with_patched(const std::string& recipe_dir, BuildOptions options,
                                             const Progress& progress) {
  Recipe recipe = load_recipe_dir(recipe_dir);
  if (options.patched.requested()) options.variants.push_back(add_patched_variant(recipe, options.patched));
  return build_variants(recipe, options, progress);
}

}  // namespace hangbench::nccl
