// Schema-versioned JSON of a whole run (docs/json-schema.md: hangbench.run/1).
#include <cmath>
#include <nlohmann/json.hpp>

#include "hangbench/provenance.hpp"
#include "hangbench/stats.hpp"
#include "report/exporters.hpp"
#include "report/text.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench::report {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no inf or NaN, and a p that underflowed must not read 0: such numbers
// become null and the "_text"/"log10_" companions carry them.
Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
Json positive_p_or_null(double p) { return p > 0 ? Json(p) : Json(nullptr); }

Json quantiles_json(const Quantiles& q) {
  return Json{{"n", q.n}, {"min", q.min}, {"p50", q.p50}, {"p90", q.p90}, {"p99", q.p99}, {"max", q.max}};
}

Json cell_json(const CellSummary& c) {
  Json j = Json{{"id", c.cell->id},
                {"params", c.cell->params},
                {"command", c.cell->argv},
                {"launcher", nlohmann::json(*c.cell)["launcher"]},
                {"environment", c.cell->env},
                {"expect", to_string(c.cell->expect)},
                {"trials_planned", c.cell->trials},
                {"timeout_s", c.cell->timeout_s},
                {"n", c.n},
                {"hangs", c.hangs},
                {"passed", c.passed},
                {"crashed", c.crashed},
                {"failed", c.failed},
                {"infra", c.infra},
                {"hang_ci95", Json{{"lo", c.hang_ci95.lo}, {"hi", c.hang_ci95.hi}}},
                {"wall_s", quantiles_json(c.wall_s)},
                {"teardown_s", quantiles_json(c.teardown_s)},
                {"verdict", to_string(c.verdict)},
                {"verdict_label", cell_verdict_label(c)},
                {"verdict_reason", c.verdict_reason},
                {"evidence_example", c.evidence_example},
                {"evidence_dir", c.evidence_dir}};
  if (!c.cell->phase_timeouts_s.empty()) j["phase_timeouts_s"] = c.cell->phase_timeouts_s;
  return j;
}

Json p_json(const std::string& name, double p, double log10_p, Json& into) {
  into[name] = positive_p_or_null(p);
  into["log10_" + name] = log10_p;
  into[name + "_text"] = stats::format_p(p, log10_p);
  return into;
}

Json comparison_json(const ComparisonResult& r) {
  Json j{{"name", r.comparison->name},
         {"a", r.comparison->a},
         {"b", r.comparison->b},
         {"a_hangs", r.a_hangs},
         {"a_n", r.a_n},
         {"b_hangs", r.b_hangs},
         {"b_n", r.b_n},
         {"a_crashed", r.a_crashed},
         {"a_failed", r.a_failed},
         {"b_crashed", r.b_crashed},
         {"b_failed", r.b_failed},
         {"counting", counting_note()}};
  p_json("p_two_sided", r.p_two_sided, r.log10_p_two_sided, j);
  p_json("p_a_greater", r.p_a_greater, r.log10_p_a_greater, j);
  p_json("p_a_less", r.p_a_less, r.log10_p_a_less, j);
  p_json("p_holm", r.p_holm, r.log10_p_holm, j);
  j["odds_ratio"] = finite_or_null(r.odds_ratio);
  j["odds_ratio_text"] = stats::format_odds_ratio(r.odds_ratio);
  j["conditional_mle_odds_ratio"] = finite_or_null(r.conditional_mle_odds_ratio);
  j["conditional_mle_odds_ratio_text"] = stats::format_odds_ratio(r.conditional_mle_odds_ratio);
  return j;
}

// The model's form of the trial, with the teardown time a report derives from
// its phases after wall_s.
Json trial_json(const TrialResult& t) {
  const Json model = t;
  const auto teardown = teardown_seconds(t);
  Json j = Json::object();
  for (auto it = model.begin(); it != model.end(); ++it) {
    j[it.key()] = it.value();
    if (it.key() == "wall_s") j["teardown_s"] = teardown ? Json(*teardown) : Json(nullptr);
  }
  return j;
}

class JsonExporter : public Exporter {
 public:
  std::string format() const override { return "json"; }
  std::string extension() const override { return ".json"; }

  std::string render(const RunSummary& run) const override {
    Json doc{{"schema", "hangbench.run/1"},
             {"complete", run.complete},
             {"matrix", Json{{"name", run.matrix.name},
                             {"path", run.matrix.path},
                             {"sha256", run.matrix.sha256},
                             {"alpha", run.matrix.alpha}}},
             {"provenance", provenance_json(run.provenance)},
             {"summary", run_summary_line(run)}};
    doc["cells"] = Json::array();
    for (const CellSummary& c : run.cells) doc["cells"].push_back(cell_json(c));
    doc["comparisons"] = Json::array();
    for (const ComparisonResult& r : run.comparisons) doc["comparisons"].push_back(comparison_json(r));
    doc["trials"] = Json::array();
    for (const TrialResult& t : run.trials) doc["trials"].push_back(trial_json(t));
    return doc.dump(2) + "\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> make_json_exporter() { return std::make_unique<JsonExporter>(); }

}  // namespace hangbench::report
