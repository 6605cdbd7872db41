// Loads third_party/nccl/pins.toml and variants.toml and checks that they fit together.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "hangbench/nccl_build.hpp"
#include "hangbench/paths.hpp"

namespace hangbench::nccl {
namespace {

namespace fs = std::filesystem;

toml::table parse_toml(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}: {} (line {})", path, e.description(), e.source().begin.line));
  }
}

std::string required_string(const toml::table& t, const char* key, const std::string& where) {
  auto value = t[key].value<std::string>();
  if (!value || value->empty()) throw UsageError(fmt::format("{}: missing string '{}'", where, key));
  return *value;
}

bool is_hex(const std::string& s, size_t length) {
  return s.size() == length && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::vector<Pin> read_pins(const std::string& path) {
  const toml::table doc = parse_toml(path);
  const toml::array* entries = doc["pin"].as_array();
  if (!entries || entries->empty()) throw UsageError(path + ": no [[pin]] entries");
  std::vector<Pin> pins;
  for (const toml::node& node : *entries) {
    const toml::table* t = node.as_table();
    if (!t) throw UsageError(path + ": [[pin]] must be a table");
    const std::string where = path + " [[pin]]";
    Pin p{required_string(*t, "version", where),        required_string(*t, "tag", where),
          required_string(*t, "commit", where),         required_string(*t, "tree", where),
          required_string(*t, "tarball_url", where),    required_string(*t, "tarball_prefix", where),
          required_string(*t, "tarball_sha256", where), t->at_path("tarball_sha256_method").value_or(std::string())};
    if (!is_hex(p.commit, 40) || !is_hex(p.tree, 40))
      throw UsageError(fmt::format("{} {}: commit and tree must be 40 lowercase hex digits", where, p.version));
    if (!is_hex(p.tarball_sha256, 64))
      throw UsageError(fmt::format("{} {}: tarball_sha256 must be 64 lowercase hex digits", where, p.version));
    pins.push_back(std::move(p));
  }
  return pins;
}

std::vector<Variant> read_variants(const std::string& path, std::string& default_gencode) {
  const toml::table doc = parse_toml(path);
  default_gencode = doc["defaults"]["gencode"].value_or(std::string("-gencode=arch=compute_90,code=sm_90"));
  const toml::array* entries = doc["variant"].as_array();
  if (!entries || entries->empty()) throw UsageError(path + ": no [[variant]] entries");
  std::vector<Variant> variants;
  for (const toml::node& node : *entries) {
    const toml::table* t = node.as_table();
    if (!t) throw UsageError(path + ": [[variant]] must be a table");
    Variant v;
    v.name = required_string(*t, "name", path + " [[variant]]");
    const std::string where = fmt::format("{} variant '{}'", path, v.name);
    v.pin = t->at_path("pin").value_or(std::string());
    v.base = t->at_path("base").value_or(std::string());
    v.description = t->at_path("description").value_or(std::string());
    if (v.pin.empty() == v.base.empty()) throw UsageError(where + ": give exactly one of 'pin' and 'base'");
    if (const toml::array* patches = (*t)["patches"].as_array()) {
      for (const toml::node& p : *patches) {
        auto text = p.value<std::string>();
        if (!text) throw UsageError(where + ": patches must be strings");
        v.patches.push_back(*text);
      }
    }
    variants.push_back(std::move(v));
  }
  return variants;
}

}  // namespace

const Pin& Recipe::pin(const std::string& version) const {
  for (const Pin& p : pins)
    if (p.version == version) return p;
  throw UsageError("no pin for NCCL " + version);
}

const Variant& Recipe::variant(const std::string& name) const {
  for (const Variant& v : variants)
    if (v.name == name) return v;
  std::string known;
  for (const Variant& v : variants) known += (known.empty() ? "" : ", ") + v.name;
  throw UsageError(fmt::format("unknown NCCL variant '{}' (known: {})", name, known));
}

std::vector<std::string> Recipe::patch_chain(const std::string& name) const {
  const Variant& v = variant(name);
  std::vector<std::string> chain = v.base.empty() ? std::vector<std::string>{} : patch_chain(v.base);
  chain.insert(chain.end(), v.patches.begin(), v.patches.end());
  return chain;
}

Recipe load_recipe(const std::string& pins_toml, const std::string& variants_toml, const std::string& root) {
  Recipe recipe;
  recipe.root = root;
  recipe.pins = read_pins(pins_toml);
  recipe.variants = read_variants(variants_toml, recipe.default_gencode);
  std::set<std::string> seen;
  for (const Variant& v : recipe.variants) {
    if (!seen.insert(v.name).second) throw UsageError(variants_toml + ": variant '" + v.name + "' defined twice");
    if (!v.base.empty() && !seen.count(v.base))
      throw UsageError(fmt::format("{}: variant '{}' has base '{}', which must be defined before it", variants_toml,
                                   v.name, v.base));
  }
  // Resolve each variant's pin through its base chain and check every patch exists.
  for (Variant& v : recipe.variants) {
    if (v.pin.empty()) v.pin = recipe.variant(v.base).pin;
    recipe.pin(v.pin);
    for (const std::string& patch : v.patches)
      if (!std::filesystem::is_regular_file(std::filesystem::path(root) / patch))
        throw UsageError(
            fmt::format("{}: variant '{}': patch {} not found under {}", variants_toml, v.name, patch, root));
  }
  return recipe;
}

std::string add_patched_variant(Recipe& recipe, const PatchedVariant& patched) {
  if (patched.patches.empty()) throw UsageError("--patch: give the patch file to apply");
  const Variant& base = recipe.variant(patched.base);  // names the known variants when unknown
  Variant v;
  v.base = base.name;
  v.pin = base.pin;
  for (const std::string& patch : patched.patches) {
    const fs::path path = fs::absolute(patch).lexically_normal();
    if (!fs::is_regular_file(path))
      throw UsageError(
          fmt::format("--patch {}: no such file (relative paths are from {})", patch, fs::current_path().string()));
    v.patches.push_back(path.string());
  }
  v.name = patched.name;
  if (v.name.empty()) {
    std::string stem = fs::path(patched.patches.front()).filename().string();
    for (const char* suffix : {".patch", ".diff"})
      if (stem.size() > std::strlen(suffix) &&
          stem.compare(stem.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
        stem.resize(stem.size() - std::strlen(suffix));
    v.name = base.name + "+" + stem;
  }
  if (v.name.find_first_of("/ \t\n") != std::string::npos || v.name == "." || v.name == "..")
    throw UsageError(fmt::format("--name '{}': a variant's name is one word without '/' (it names a folder)", v.name));
  for (const Variant& known : recipe.variants)
    if (known.name == v.name)
      throw UsageError(fmt::format("--name {}: the recipe already has a variant of that name; choose another", v.name));
  v.description = fmt::format("{} with {}", base.name, fmt::join(patched.patches, ", "));
  recipe.variants.push_back(v);
  return v.name;
}

Recipe load_recipe_dir(const std::string& recipe_dir) {
  if (recipe_dir.empty()) return load_default_recipe();
  return load_recipe(recipe_dir + "/pins.toml", recipe_dir + "/variants.toml",
                     fs::path(recipe_dir).parent_path().parent_path().string());
}

Recipe load_default_recipe() {
  const std::string root = source_root();
  return load_recipe(root + "/third_party/nccl/pins.toml", root + "/third_party/nccl/variants.toml", root);
}

std::string default_cache_dir() { return default_nccl_cache(); }

Adoption parse_adoption(const std::string& text) {
  const auto eq = text.find('=');
  const auto colon = text.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || eq == 0 || colon == std::string::npos || colon == eq + 1 || colon + 1 == text.size())
    throw UsageError("--adopt wants NAME=SOURCE_DIR:BUILD_DIR, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1, colon - eq - 1), text.substr(colon + 1)};
}

}  // namespace hangbench::nccl
