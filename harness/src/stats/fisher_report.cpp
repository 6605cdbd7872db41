#include "hangbench/fisher_report.hpp"

#include <fmt/format.h>

#include <cmath>

namespace hangbench::stats {
namespace {

using Json = nlohmann::ordered_json;

Json side_json(Tally t) {
  Interval ci = clopper_pearson(t.k, t.n, 0.95);
  return Json{{"hangs", t.k},
              {"trials", t.n},
              {"rate", static_cast<double>(t.k) / static_cast<double>(t.n)},
              {"ci95", Json{{"lo", ci.lo}, {"hi", ci.hi}}}};
}

// JSON has no inf/NaN and an underflowed p must not read 0: null plus text.
Json number_or_null(double v) { return std::isfinite(v) && v != 0 ? Json(v) : Json(nullptr); }

void add_p(Json& j, const std::string& name, double p, double log10_p) {
  j[name] = number_or_null(p);
  j["log10_" + name] = log10_p;
  j[name + "_text"] = format_p(p, log10_p);
}

std::string side_line(const char* label, Tally t) {
  Interval ci = clopper_pearson(t.k, t.n, 0.95);
  return fmt::format("{}: {}/{} hung ({:.1f} %), 95% CI {:.1f}–{:.1f} % (Clopper-Pearson)\n", label, t.k, t.n,
                     100.0 * static_cast<double>(t.k) / static_cast<double>(t.n), 100 * ci.lo, 100 * ci.hi);
}

}  // namespace

Json fisher_report_json(Tally a, Tally b, double alpha) {
  FisherResult f = fisher_exact(a, b);
  Json j{{"schema", "hangbench.fisher/1"}, {"a", side_json(a)}, {"b", side_json(b)}, {"alpha", alpha}};
  add_p(j, "p_two_sided", f.p_two_sided, f.log10_p_two_sided);
  add_p(j, "p_a_greater", f.p_a_greater, f.log10_p_a_greater);
  add_p(j, "p_a_less", f.p_a_less, f.log10_p_a_less);
  j["odds_ratio"] = std::isfinite(f.odds_ratio) ? Json(f.odds_ratio) : Json(nullptr);
  j["odds_ratio_text"] = format_odds_ratio(f.odds_ratio);
  j["conditional_mle_odds_ratio"] =
      std::isfinite(f.conditional_mle_odds_ratio) ? Json(f.conditional_mle_odds_ratio) : Json(nullptr);
  j["conditional_mle_odds_ratio_text"] = format_odds_ratio(f.conditional_mle_odds_ratio);
  j["significant_two_sided"] = f.log10_p_two_sided <= std::log10(alpha);
  return j;
}

std::string fisher_report_text(Tally a, Tally b, double alpha) {
  FisherResult f = fisher_exact(a, b);
  std::string out = side_line("a", a) + side_line("b", b);
  out += "Fisher's exact test (both margins fixed):\n";
  out += fmt::format("  p two-sided   {}\n", format_p(f.p_two_sided, f.log10_p_two_sided));
  out += fmt::format("  p (a > b)     {}\n", format_p(f.p_a_greater, f.log10_p_a_greater));
  out += fmt::format("  p (a < b)     {}\n", format_p(f.p_a_less, f.log10_p_a_less));
  out += fmt::format("  odds ratio    {} (sample), {} (conditional MLE)\n", format_odds_ratio(f.odds_ratio),
                     format_odds_ratio(f.conditional_mle_odds_ratio));
  bool significant = f.log10_p_two_sided <= std::log10(alpha);
  out += fmt::format("  two-sided p {} alpha {}: {}\n", significant ? "<=" : ">", alpha,
                     significant ? "the hang rates differ" : "no significant difference");
  return out;
}

}  // namespace hangbench::stats
