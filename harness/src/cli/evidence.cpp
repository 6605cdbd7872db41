// `hangbench evidence STORE... [--run ID] [--reference AXIS=VALUE,...] [--hang DIAGNOSE.json] [--out FILE]`:
// the Markdown table a release note cites, from one or more stores, and, with
// --hang, one hang seen from outside (`hangbench diagnose --json`, judged again).
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/evidence_from_stores.hpp"
#include "hangbench/findings.hpp"
#include "hangbench/model.hpp"
#include "hangbench/render.hpp"
#include "hangbench/snapshot.hpp"
#include "hangbench/store.hpp"

namespace hangbench::cli {
namespace {

struct EvidenceArgs {
  std::vector<std::string> stores;
  std::vector<std::string> runs;
  std::string reference;
  std::string hang;  // a diagnose JSON file
  std::string out;
};

// The diagnose section of one hang; throws EvidenceUsageError naming the file
// (and the line, for JSON that does not parse).
std::string hang_section(const std::string& path) {
  diagnose::Snapshot snapshot;
  try {
    snapshot = diagnose::read_snapshot_file(path);
  } catch (const std::invalid_argument& e) {
    throw evidence::EvidenceUsageError(std::string("--hang: ") + e.what());
  }
  return "\n## One hang, seen from outside\n\n`hangbench diagnose --json` of a live hung trial (" + path +
         "), judged again by this hangbench's rules.\n\n" +
         diagnose::render_markdown(snapshot, diagnose::find_hang_shapes(snapshot));
}

int evidence_command(const EvidenceArgs& args) {
  evidence::CellFilter reference;
  if (!args.reference.empty()) {
    std::string error;
    auto parsed = evidence::parse_cell_filter(args.reference, &error);
    if (!parsed) throw UsageError("--reference " + error);
    reference = *parsed;
  }
  std::string table = evidence::evidence_from_stores(args.stores, args.runs, reference);
  if (!args.hang.empty()) table += hang_section(args.hang);
  if (args.out.empty()) {
    std::cout << table;
    return exit_code::kOk;
  }
  write_file_atomically(args.out, table);  // every write and the close checked: a full disk is exit 3
  std::cerr << "hangbench evidence: wrote " << args.out << "\n";
  return exit_code::kOk;
}

}  // namespace

void add_evidence_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<EvidenceArgs>();
  auto* sub = app.add_subcommand("evidence", "Release-note table (Markdown) of hangs per build and scenario");
  sub->add_option("stores", args->stores, "SQLite stores (hangbench.sqlite) to read")->required();
  sub->add_option("--run", args->runs, "run id to use (repeatable); default: the latest run of each store");
  sub->add_option("--reference", args->reference,
                  "cells to test every other cell against, e.g. build=2.18.1 (same scenario)");
  sub->add_option("--hang", args->hang,
                  "append one hang's evidence: the JSON of `hangbench diagnose --json` (with --stacks, its native "
                  "stacks)");
  sub->add_option("--out", args->out, "write the Markdown here instead of stdout");
  set_help(sub, {{{"hangbench evidence out/m/hangbench.sqlite --reference build=2.17.1+backport",
                   "the release-note table: every build against the fixed one"},
                  {"hangbench evidence out/m/hangbench.sqlite --hang diagnose.json --out note.md",
                   "with one hang's evidence (`hangbench diagnose --json`) appended"}},
                 {{0, "the table was written"},
                  {2, "usage or configuration error: the message names the file and line"},
                  {3, "a store or --hang file cannot be read, or --out cannot be written"}},
                 "docs/evidence.md"});
  sub->callback([args, &rc] { rc = guarded("evidence", [&] { return evidence_command(*args); }); });
}

}  // namespace hangbench::cli
