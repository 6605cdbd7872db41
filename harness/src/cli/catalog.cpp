// `hangbench catalog list | show ID [--json] | check LIB... [--hang ID|all]`: wiring only;
// see hangbench/catalog.hpp and hangbench/static_check.hpp.
// Exit 0 printed (check: no library lacks a checked fix), 1 (check) a library lacks one,
// 2 unknown id (the message lists the known ones) or a file that is no NCCL library.
#include "hangbench/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/model.hpp"
#include "hangbench/static_check.hpp"

namespace hangbench::cli {
namespace {

struct CatalogArgs {
  std::string id;
  bool json = false;
  std::vector<std::string> libraries;
  std::vector<std::string> hangs;
};

std::string known_ids() {
  std::string ids;
  for (const auto& e : catalog::entries()) ids += (ids.empty() ? "" : ", ") + e.id;
  return ids;
}

int list_command(const CatalogArgs& args) {
  return guarded("catalog", [&] {
    if (args.json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& e : catalog::entries()) all.push_back(catalog::to_json(e));
      std::cout << all.dump(2) << "\n";
    } else {
      std::cout << catalog::list_text();
    }
    return exit_code::kOk;
  });
}

int show_command(const CatalogArgs& args) {
  return guarded("catalog", [&] {
    const catalog::Entry* e = catalog::find(args.id);
    if (!e) {
      std::cerr << "hangbench catalog show: no entry '" << args.id << "' in the catalog; known: " << known_ids()
                << "\n";
      return exit_code::kUsage;
    }
    std::cout << (args.json ? catalog::to_json(*e).dump(2) + "\n" : catalog::show_text(*e));
    return exit_code::kOk;
  });
}

// Every library read once, each entry's check of its bytes in a row.
int check_command(const CatalogArgs& args) {
  return guarded("catalog", [&] {
    std::vector<const catalog::Entry*> entries;
    const bool all = args.hangs.empty() || std::find(args.hangs.begin(), args.hangs.end(), "all") != args.hangs.end();
    for (const auto& e : catalog::entries())
      if (all || std::find(args.hangs.begin(), args.hangs.end(), e.id) != args.hangs.end()) entries.push_back(&e);
    for (const auto& id : args.hangs)
      if (id != "all" && !catalog::find(id)) {
        std::cerr << "hangbench catalog check: no entry '" << id << "' in the catalog; known: " << known_ids() << "\n";
        return exit_code::kUsage;
      }
    bool lacks = false, unreadable = false;
    nlohmann::json out = nlohmann::json::array();
    for (const auto& path : args.libraries) {
      const auto checked = validate::check_library(path, entries);
      unreadable |= !checked.problem.empty();
      for (const auto& c : checked.checks) lacks |= validate::has_the_hang(c.verdict);
      if (args.json) {
        out.push_back(validate::to_json(checked));
        continue;
      }
      if (!checked.problem.empty()) {
        std::cout << fmt::format("{}: {}\n", path, checked.problem);
        continue;
      }
      std::cout << fmt::format("{} (NCCL {}, sha256 {})\n", path,
                               checked.version.empty() ? "of unknown version" : checked.version,
                               checked.sha256.substr(0, 12));
      for (const auto& c : checked.checks)
        std::cout << fmt::format("  {:<28} {:<14} {}\n", c.entry, validate::to_string(c.verdict), c.reason);
    }
    if (args.json) std::cout << out.dump(2) << "\n";
    if (unreadable) {
      std::cerr << "hangbench catalog check: a file above is no NCCL library (its line says why)\n";
      return exit_code::kUsage;
    }
    return lacks ? 1 : exit_code::kOk;
  });
}

}  // namespace

void add_catalog_command(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand(
      "catalog", "The known hangs: mechanism, upstream references, reproducer, remedies, claimed and measured ranges");
  cmd->require_subcommand(1);
  auto args = std::make_shared<CatalogArgs>();
  auto* list = cmd->add_subcommand("list", "every entry with its claimed and measured ranges");
  list->add_flag("--json", args->json, "print JSON (an array of hangbench.catalog/1)");
  list->callback([args, &rc] { rc = list_command(*args); });
  auto* show = cmd->add_subcommand("show", "one entry in full, with each measured release's verdict and p-values");
  show->add_option("id", args->id, "the entry's id (hangbench catalog list)")->required();
  show->add_flag("--json", args->json, "print JSON (hangbench.catalog/1)");
  show->callback([args, &rc] { rc = show_command(*args); });
  auto* check = cmd->add_subcommand("check", "what each library's bytes say about each known hang, without running it");
  check->add_option("libraries", args->libraries, "libnccl.so files")->required();
  check->add_option("--hang", args->hangs, "an entry's id, repeat for more, or 'all' (default)");
  check->add_flag("--json", args->json, "print JSON: one object per library with its checks");
  check->callback([args, &rc] { rc = check_command(*args); });
  const CommandHelp help{
      {{"hangbench catalog list", "every known hang, claimed and measured ranges"},
       {"hangbench catalog show nccl-socket-close-alias",
        "one entry: mechanism, references, reproducer, remedies, each release's verdict"},
       {"hangbench catalog show nccl-socket-close-alias --json", "the same as JSON"},
       {"hangbench catalog check LIB...",
        "each entry's check of the library's bytes: has the fix, lacks it, affected or not (an entry no release "
        "fixes), or cannot tell"},
       {"hangbench sweep --hang nccl-launch-blocking-proxy LIB...",
        "run an entry's reproducer over libraries (docs/catalog.md)"}},
      {{0, "printed (check: no library lacks the fix of a checked entry or carries a change no release fixes)"},
       {1, "check: a library lacks the fix of an entry whose bytes tell, or is affected by one no release fixes"},
       {2,
        "usage error, no entry with that id (the message lists them), or a file that is no NCCL "
        "library"}},
      "docs/catalog.md"};
  set_help(cmd, help);
  set_help(list, help);
  set_help(show, help);
  set_help(check, help);
}

}  // namespace hangbench::cli
