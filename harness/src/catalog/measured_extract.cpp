// What an entry's results/ files say, in a compact form: the rows of a sweep's
// release-table.json and the named cells of report.json files. The build runs this
// (catalog_embed) and embeds the output; catalog_embed_test runs it again on the
// checkout and compares. It depends on toml++ and nlohmann/json only, so that the
// build tool links without the harness.
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "hangbench/catalog.hpp"

namespace hangbench::catalog {
namespace {

std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.string() + ": not JSON: " + e.what());
  }
}

nlohmann::json sweep_rows(const nlohmann::json& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.value("rows", nlohmann::json::array())) {
    const bool judged = row.value("problem", std::string()).empty();
    nlohmann::json r = {
        {"release", row.value("release", "")},
        {"version", row.contains("static") ? row["static"].value("version", "") : ""},
        {"verdict", judged ? row.value("verdict", "") : "not run"},
        {"hangs", row.value("teardown_hangs", 0)},
        {"counted", row.value("counted", 0)},
        {"p_vs_fixed", row.contains("p_vs_fixed") ? row["p_vs_fixed"].value("p", "") : ""},
        {"p_vs_vulnerable", row.contains("p_vs_vulnerable") ? row["p_vs_vulnerable"].value("p", "") : ""}};
    rows.push_back(r);
  }
  return rows;
}

// A table of several entries (`sweep --hang A --hang B`) gives each entry a column; its
// top-level rows are the first entry's. An entry reads its own column, with the version
// from the row of the same library. Tables written before the cells carried their counts
// give -1 for both (unknown), never the first entry's counts.
std::optional<nlohmann::json> column_rows(const nlohmann::json& table, const std::string& id) {
  for (const auto& column : table.value("hangs", nlohmann::json::array())) {
    if (column.value("id", "") != id) continue;
    std::map<std::string, std::string> version_of;
    for (const auto& row : table.value("rows", nlohmann::json::array()))
      if (row.contains("static")) version_of[row.value("library", "")] = row["static"].value("version", "");
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& cell : column.value("cells", nlohmann::json::array())) {
      const std::string word = cell.value("verdict_word", "");
      rows.push_back({{"release", cell.value("release", "")},
                      {"version", version_of[cell.value("library", "")]},
                      {"verdict", word == "not judged" ? "not run" : word},
                      {"hangs", cell.value("hangs", -1)},
                      {"counted", cell.value("counted", -1)},
                      {"p_vs_fixed", cell.value("p_vs_fixed", "")},
                      {"p_vs_vulnerable", cell.value("p_vs_vulnerable", "")}});
    }
    return rows;
  }
  return std::nullopt;
}

bool decisive(const std::string& verdict) {
  return verdict == "vulnerable" || verdict == "not affected" || verdict.rfind("fixed", 0) == 0 ||
         verdict.rfind("not vulnerable", 0) == 0;
}

void merge_row(nlohmann::json& rows, const nlohmann::json& row) {
  for (auto& existing : rows) {
    if (existing.value("release", "") != row.value("release", "")) continue;
    if (!decisive(existing.value("verdict", "")) && decisive(row.value("verdict", ""))) existing = row;
    return;
  }
  rows.push_back(row);
}

}  // namespace

nlohmann::json extract_measured(const std::string& source_dir, const std::string& entry_text, const std::string& file) {
  toml::table root;
  try {
    root = toml::parse(entry_text, file);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(file + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  nlohmann::json out = nlohmann::json::object();
  const toml::table* measured = root["measured"].as_table();
  if (!measured) return out;
  const std::filesystem::path dir(source_dir);
  if (auto sweep = (*measured)["sweep"].value<std::string>()) {
    auto table = read_json(dir / *sweep);
    out["sweep"] = {{"path", *sweep}, {"found", table.has_value()}};
    if (table) {
      const std::string id = root["id"].value_or(std::string());
      auto column = column_rows(*table, id);
      // One row per release: the cu11, cu12 and cu13 builds of a release are one release
      // of the range, the decisive verdict of its builds kept (as `also` merges below).
      out["sweep"]["rows"] = nlohmann::json::array();
      for (const auto& row : column ? *column : sweep_rows(*table)) merge_row(out["sweep"]["rows"], row);
    }
    // `also`: later sweeps of other releases (one call carries a few wheels). A release
    // they judge is added; one the first table left unjudged takes their verdict.
    if (const toml::array* also = (*measured)["also"].as_array()) {
      const std::string id = root["id"].value_or(std::string());
      for (const toml::node& node : *also) {
        const std::string path = node.value_or(std::string());
        auto more = read_json(dir / path);
        if (!more) {
          out["sweep"]["found"] = false;  // the range would silently lose releases
          continue;
        }
        auto column = column_rows(*more, id);
        for (const auto& row : column ? *column : sweep_rows(*more)) merge_row(out["sweep"]["rows"], row);
      }
    }
  }
  if (const toml::array* runs = (*measured)["runs"].as_array()) {
    out["runs"] = nlohmann::json::array();
    std::map<std::string, std::optional<nlohmann::json>> reports;  // each report read once
    for (const toml::node& run : *runs) {
      const toml::table* t = run.as_table();
      if (!t) continue;
      const std::string report = (*t)["report"].value_or(std::string());
      const std::string cell = (*t)["cell"].value_or(std::string());
      if (!reports.count(report)) reports[report] = read_json(dir / report);
      nlohmann::json c = {{"report", report}, {"cell", cell}, {"found", false}};
      if (const auto& j = reports[report]) {
        for (const auto& candidate : j->value("cells", nlohmann::json::array())) {
          if (candidate.value("id", "") != cell) continue;
          c["found"] = true;
          c["n"] = candidate.value("n", 0);
          c["hangs"] = candidate.value("hangs", 0);
        }
      }
      out["runs"].push_back(c);
    }
  }
  return out;
}

}  // namespace hangbench::catalog
