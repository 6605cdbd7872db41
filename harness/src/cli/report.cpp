// `hangbench report`: renders a stored run again, in any format.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/shard.hpp"
#include "hangbench/store.hpp"

namespace hangbench::cli {
namespace {

struct ReportArgs {
  std::string out;
  std::string store;
  std::string run;
  std::vector<std::string> formats;
  std::string dest;
  bool list = false;
  bool json = false;  // with --list: one JSON document (schema hangbench.runs/1)
};

// The store's runs for scripts: id, matrix name, status, trials, start, end and shard.
std::string runs_json(const std::vector<RunInfo>& runs) {
  nlohmann::ordered_json doc{{"schema", "hangbench.runs/1"}, {"runs", nlohmann::ordered_json::array()}};
  for (const auto& r : runs) {
    nlohmann::ordered_json j{{"id", r.id},         {"matrix", r.matrix},         {"status", r.status},
                             {"trials", r.trials}, {"started_at", r.started_at}, {"finished_at", r.finished_at}};
    j["shard"] = r.shard ? nlohmann::ordered_json(to_string(*r.shard)) : nlohmann::ordered_json(nullptr);
    doc["runs"].push_back(j);
  }
  return doc.dump(2) + "\n";
}

// "; out holds 2 run folders: out/a, out/b (report --out one of them)": a parent
// folder given as --out (hangbench-out/, where runs go without --out) names its runs.
std::string run_folders_in(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (out.empty() || !fs::is_directory(out, ec)) return "";
  std::vector<std::string> found;
  for (auto it = fs::recursive_directory_iterator(out, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 2) it.disable_recursion_pending();
    if (it->path().filename() == "hangbench.sqlite") found.push_back(it->path().parent_path().string());
  }
  if (found.empty()) return "; " + out + " holds no run folder either";
  std::sort(found.begin(), found.end());
  std::string list;
  for (const auto& f : found) list += (list.empty() ? "" : ", ") + f;
  return fmt::format("; {} holds {} run folder{}: {} (report --out one of them)", out, found.size(),
                     found.size() == 1 ? "" : "s", list);
}

int report_command(const ReportArgs& args) {
  return guarded("report", [&]() -> int {
    if (args.out.empty() && args.store.empty()) throw UsageError("give --out DIR or --store FILE");
    std::string store_path =
        !args.store.empty() ? args.store : (std::filesystem::path(args.out) / "hangbench.sqlite").string();
    if (!std::filesystem::exists(store_path)) throw UsageError("no store at " + store_path + run_folders_in(args.out));
    Store store = Store::open_read_only(store_path);
    if (args.json && !args.list) throw UsageError("--json goes with --list (reports take --format json)");
    if (args.list && args.json) {
      std::cout << runs_json(store.list_runs());
      return exit_code::kOk;
    }
    if (args.list) {
      for (const auto& r : store.list_runs()) {
        std::cout << r.id << "  " << (r.matrix.empty() ? "(unnamed matrix)" : r.matrix) << "  " << r.status << "  "
                  << r.trials << " trials  started " << r.started_at
                  << (r.shard ? "  shard " + to_string(*r.shard) : std::string()) << "\n";
      }
      return exit_code::kOk;
    }
    auto run_id = args.run.empty() ? store.latest_run() : std::optional<std::string>(args.run);
    if (!run_id) throw UsageError("the store " + store_path + " holds no run");
    if (!args.run.empty()) {
      std::string known;
      bool found = false;
      for (const auto& r : store.list_runs()) {
        found = found || r.id == args.run;
        known += (known.empty() ? "" : ", ") + r.id;
      }
      if (!found) throw UsageError("--run " + args.run + ": no such run in " + store_path + " (runs: " + known + ")");
    }
    StoredRun run = store.load_run(*run_id);
    bool complete = run.info.status == "complete";
    const std::string run_dir = std::filesystem::absolute(store_path).parent_path().string();
    const std::string dest = args.dest.empty() ? run_dir : args.dest;
    if (!args.dest.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(dest, ec);
      if (ec || !std::filesystem::is_directory(dest)) {
        throw InfraError("--dest " + dest + ": cannot make the folder" + (ec ? ": " + ec.message() : ""));
      }
      rebase_evidence_dirs(run.trials, run_dir, dest);  // links from dest back into the run folder
    }
    RunSummary summary = summarize(run.matrix, run.provenance, run.trials, complete);
    std::vector<std::string> formats = args.formats.empty() ? RunOptions{}.formats : args.formats;
    for (const auto& f : write_reports(summary, dest, normalize_formats(formats))) {
      std::cerr << "hangbench: wrote " << f << "\n";
    }
    if (auto terminal = make_exporter("terminal")) std::cout << terminal->render(summary);
    return exit_code_for(summary, false);
  });
}

}  // namespace

void add_report_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand("report", "Render the reports of a stored run again");
  sub->add_option("--out", args->out, "Output folder of a run (holds hangbench.sqlite)");
  sub->add_option("--store", args->store, "Path of a hangbench.sqlite store");
  sub->add_option("--run", args->run, "Run id (default: the latest run)");
  sub->add_option("--format", args->formats, "Formats: md,json,csv,junit,html")->delimiter(',');
  sub->add_option("--dest", args->dest, "Folder for the reports (default: the run's folder)");
  sub->add_flag("--list", args->list, "List the runs of the store");
  sub->add_flag("--json", args->json, "With --list: the runs as JSON (schema hangbench.runs/1), for scripts");
  set_help(sub, {{{"hangbench report --out out/m", "every report of the run in out/m again, in out/m"},
                  {"hangbench report --out out/m --format html --dest site/m",
                   "the HTML elsewhere; its evidence links still reach the trial folders"},
                  {"hangbench report --store out/m/hangbench.sqlite --list", "the runs of a store"}},
                 {{0, "the run's expectations confirmed (or inconclusive)"},
                  {1, "an expectation contradicted"},
                  {2, "usage or configuration error: the message names the file and line"},
                  {3, "the store cannot be read, or a report cannot be written"}},
                 "docs/evidence.md, docs/json-schema.md"});
  sub->callback([&rc, args] { rc = report_command(*args); });
}

}  // namespace hangbench::cli
