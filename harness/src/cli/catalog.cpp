// `hangbench catalog list | show ID [--json]`: wiring only; see hangbench/catalog.hpp.
// Exit 0 printed, 2 unknown id (the message lists the known ones).
#include "hangbench/catalog.hpp"

#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/model.hpp"

namespace hangbench::cli {
namespace {

struct CatalogArgs {
  std::string id;
  bool json = false;
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
  const CommandHelp help{{{"hangbench catalog list", "every known hang, claimed and measured ranges"},
                          {"hangbench catalog show nccl-socket-close-alias",
                           "one entry: mechanism, references, reproducer, remedies, each release's verdict"},
                          {"hangbench catalog show nccl-socket-close-alias --json", "the same as JSON"},
                          {"hangbench sweep --hang nccl-launch-blocking-proxy LIB...",
                           "run an entry's reproducer over libraries (docs/catalog.md)"}},
                         {{0, "printed"}, {2, "usage error, or no entry with that id (the message lists them)"}},
                         "docs/catalog.md"};
  set_help(cmd, help);
  set_help(list, help);
  set_help(show, help);
}

}  // namespace hangbench::cli
