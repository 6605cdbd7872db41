// Each cell's latest night against its earlier nights: the first thing the
// nightly page says (what regressed, which verdicts changed).
#include <set>

#include "hangbench/history.hpp"
#include "hangbench/stats.hpp"
#include "history/render.hpp"

namespace hangbench::history {

std::vector<CellGlance> glance(const HistoryTable& table) {
  std::vector<CellGlance> out;
  for (const CellHistory& cell : table.cells) {
    CellGlance g;
    g.cell = &cell;
    if (!cell.nights.empty()) {
      g.latest = &cell.nights.back();
      if (cell.nights.size() > 1) g.previous = &cell.nights[cell.nights.size() - 2];
      std::set<std::string> dates;
      for (size_t i = 0; i + 1 < cell.nights.size(); ++i) {
        if (cell.nights[i].n == 0) continue;  // an all-INFRA night says nothing about the rate
        g.baseline_hangs += cell.nights[i].hangs;
        g.baseline_n += cell.nights[i].n;
        ++g.baseline_nights;
        dates.insert(night_date(cell.nights[i].started_at));
      }
      g.baseline_dates = static_cast<int>(dates.size());
      if (g.baseline_n > 0 && g.latest->n > 0) {
        g.p_worse = stats::fisher_exact({g.latest->hangs, g.latest->n}, {g.baseline_hangs, g.baseline_n}).p_a_greater;
        g.regressed = g.p_worse < table.alpha;
      }
      g.verdict_changed = g.previous && g.previous->verdict != g.latest->verdict;
    }
    out.push_back(g);
  }
  return out;
}

}  // namespace hangbench::history
