// One row per trial, RFC 4180: CRLF line ends, fields with comma, quote or line
// break quoted, quotes doubled. One column per matrix axis, for pandas and R.
#include <fmt/format.h>

#include <set>

#include "report/exporters.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench::report {
namespace {

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\r\n";
}

class CsvExporter : public Exporter {
 public:
  std::string format() const override { return "csv"; }
  std::string extension() const override { return ".csv"; }

  std::string render(const RunSummary& run) const override {
    std::set<std::string> axes;
    std::map<std::string, const Cell*> cells;
    for (const Cell& c : run.matrix.cells) {
      cells[c.id] = &c;
      for (const auto& [axis, value] : c.params) axes.insert(axis);
    }
    std::vector<std::string> header{"cell_id"};
    for (const std::string& axis : axes) header.push_back(axis);
    for (const char* column : {"trial", "outcome", "exit_code", "signal", "started_at", "wall_s", "teardown_s",
                               "hung_phase", "evidence_dir", "evidence_summary", "survivors", "infra_error"})
      header.push_back(column);
    std::string out = csv_row(header);
    for (const TrialResult& t : run.trials) {
      std::vector<std::string> row{t.cell_id};
      const Cell* cell = cells.count(t.cell_id) ? cells[t.cell_id] : nullptr;
      for (const std::string& axis : axes) {
        auto found = cell ? cell->params.find(axis) : decltype(cell->params.end()){};
        row.push_back(cell && found != cell->params.end() ? found->second : "");
      }
      auto teardown = teardown_seconds(t);
      std::string survivors;
      for (int pid : t.survivors) survivors += (survivors.empty() ? "" : " ") + std::to_string(pid);
      for (std::string field :
           {std::to_string(t.index), to_string(t.outcome), std::to_string(t.exit_code), std::to_string(t.signal),
            fmt::format("{:.6f}", t.started_at), fmt::format("{:.6f}", t.wall_s),
            teardown ? fmt::format("{:.6f}", *teardown) : std::string(), t.hung_phase, t.evidence_dir,
            t.evidence_summary, survivors, t.infra_error})
        row.push_back(std::move(field));
      out += csv_row(row);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_csv_exporter() { return std::make_unique<CsvExporter>(); }

}  // namespace hangbench::report
