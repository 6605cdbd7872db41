// `hangbench history`: the nightly history store.
//   history [--store FILE] [--nights N] [--cell FILTER]... [--format F] [--out FILE]
//   history append --store FILE RUN_STORE...
//   history check --store FILE [--run ID] [--nights N] [--alpha A] [--junit FILE]
#include "hangbench/history.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/matrix.hpp"

namespace hangbench::cli {
namespace {

struct HistoryArgs {
  std::string store = "hangbench-history.sqlite";
  int nights = 0;
  std::vector<std::string> cells;
  std::string format = "table";
  std::string out;
  std::vector<std::string> run_stores;  // append
  std::string run;                      // check
  double alpha = 0.01;
  std::string junit;
  std::string report_link;  // show --format html
};

void require_existing_store(const std::string& path) {
  if (!std::filesystem::exists(path)) throw UsageError("no history store at " + path);
}

void write_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, text);
  std::cerr << "hangbench history: wrote " << path << "\n";
}

int show_command(const HistoryArgs& args) {
  return guarded("history", [&]() -> int {
    if (args.nights < 0) throw UsageError("--nights must be 0 (all) or more");
    require_existing_store(args.store);
    Store store = Store::open_read_only(args.store);  // showing writes nothing into it
    if (!(args.alpha > 0 && args.alpha < 1)) throw UsageError("--alpha must be between 0 and 1");
    history::HistoryTable table = history::load_history(store, args.nights, args.cells);
    table.report_link = args.report_link;
    table.alpha = args.alpha;
    std::string text = history::render_history(table, args.format);
    if (args.out.empty()) {
      std::cout << text;
    } else {
      write_file(args.out, text);
    }
    return exit_code::kOk;
  });
}

int append_command(const HistoryArgs& args) {
  return guarded("history", [&]() -> int {
    for (const auto& path : args.run_stores) {
      if (!std::filesystem::exists(path)) throw UsageError("no run store at " + path);
    }
    Store store = Store::open(args.store);
    for (const auto& path : args.run_stores) {
      auto appended = history::append_runs(store, path);
      for (const auto& id : appended) std::cout << id << "\n";  // the nightly script checks these
      std::cerr << "hangbench history: appended " << appended.size() << " run(s) from " << path << "\n";
    }
    return exit_code::kOk;
  });
}

int check_command(const HistoryArgs& args) {
  return guarded("history", [&]() -> int {
    if (args.nights < 0) throw UsageError("--nights must be 0 (all) or more");
    if (!(args.alpha > 0 && args.alpha < 1)) throw UsageError("--alpha must lie strictly between 0 and 1");
    require_existing_store(args.store);
    Store store = Store::open(args.store);
    std::string run = args.run;
    if (run.empty()) {
      auto latest = store.latest_run();
      if (!latest) throw UsageError("the history " + args.store + " holds no run");
      run = *latest;
    } else {
      auto runs = store.list_runs();
      bool known = std::any_of(runs.begin(), runs.end(), [&](const RunInfo& r) { return r.id == run; });
      if (!known) throw UsageError("no run '" + run + "' in the history " + args.store);
    }
    auto result = history::check_run(store, run, args.nights, args.alpha);
    std::cout << history::render_check_text(result);
    if (!args.junit.empty()) write_file(args.junit, history::render_check_junit(result));
    return result.exit_code;
  });
}

}  // namespace

void add_history_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<HistoryArgs>();
  auto* sub = app.add_subcommand("history", "Nightly history: hang rates and teardown times night by night");
  sub->require_subcommand(0, 1);
  sub->add_option("--store", args->store, "History store (SQLite, same schema as a run's store)")
      ->capture_default_str();
  sub->add_option("--nights", args->nights, "Only the last N nights (0 = all)");
  sub->add_option("--cell", args->cells, "Only cells whose id contains this text (repeatable)");
  sub->add_option("--format", args->format, "table, markdown, json or html")->capture_default_str();
  sub->add_option("--out", args->out, "Write here instead of stdout");
  sub->add_option("--report-link", args->report_link,
                  "html: each night's square links here; {run} is its run id, {matrix} its matrix's name "
                  "(e.g. reports/{run}.html)");
  sub->add_option("--alpha", args->alpha,
                  "html: the latest night of a cell is marked regressed below this one-sided Fisher p")
      ->capture_default_str();

  auto* append = sub->add_subcommand("append", "Append the runs of run stores to the history");
  append->add_option("--store", args->store, "History store (created when missing)")->required();
  append->add_option("run_stores", args->run_stores, "Run stores (hangbench.sqlite) to append")->required();
  set_help(append, {{{"hangbench history append --store nightly.sqlite out/m/hangbench.sqlite",
                      "add tonight's run (its id is printed); the history is created when missing"}},
                    {{0, "appended (a run already there is not added twice)"},
                     {2, "no run store at a path given"},
                     {3, "a store cannot be read or written"}},
                    "docs/nightly.md"});
  append->callback([args, &rc] { rc = append_command(*args); });

  auto* check = sub->add_subcommand("check", "Fisher test of a run's hang rates against the previous nights");
  check->add_option("--store", args->store, "History store")->required();
  check->add_option("--run", args->run, "Run id (default: the latest run of the history)");
  check->add_option("--nights", args->nights, "Pool the previous N nights (0 = all)");
  check->add_option("--alpha", args->alpha, "Significance level of the one-sided test")->capture_default_str();
  check->add_option("--junit", args->junit, "Write JUnit XML here (a <failure> per regressed cell)");
  set_help(check, {{{"hangbench history check --store nightly.sqlite --junit regressions.xml",
                     "tonight's run against every earlier night; exit 1 on a regression"},
                    {"hangbench history check --store nightly.sqlite --run RUN_ID --nights 7",
                     "one run against the seven nights before it"}},
                   {{0, "no cell regressed and every expectation confirmed"},
                    {1, "a cell regressed, or an expectation was contradicted"},
                    {2, "no history store, no such run, or bad usage"},
                    {3, "the store cannot be read"}},
                   "docs/nightly.md"});
  check->callback([args, &rc] { rc = check_command(*args); });

  set_help(sub, {{{"hangbench history --store nightly.sqlite --format html --report-link 'reports/{run}.html' "
                   "--out history.html",
                   "the nightly page: what regressed first, then a heat map of cells x nights"},
                  {"hangbench history append --store nightly.sqlite out/m/hangbench.sqlite", "add tonight's run"},
                  {"hangbench history check --store nightly.sqlite --junit regressions.xml",
                   "tonight against the previous nights; exit 1 on a regression"}},
                 {{0, "shown or appended; check: no regression and every expectation confirmed"},
                  {1, "check: a cell regressed, or an expectation was contradicted"},
                  {2, "usage or configuration error: the message names the file and line"},
                  {3, "the store cannot be read or written"}},
                 "docs/nightly.md"});
  sub->callback([sub, args, &rc] {
    if (!sub->get_subcommands().empty()) return;  // append/check already ran
    rc = show_command(*args);
  });
}

}  // namespace hangbench::cli
