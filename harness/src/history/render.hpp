// The HTML form of the history lives in its own file; render_history dispatches.
#pragma once

#include <string>

#include "hangbench/history.hpp"

namespace hangbench::history {

std::string render_history_html(const HistoryTable& table);

// A cell's latest night at a glance: its hang rate against its earlier nights
// (pooled, one-sided Fisher at the table's alpha) and its verdict against the
// night before's.
struct CellGlance {
  const CellHistory* cell = nullptr;
  const CellNight* latest = nullptr;                            // null: the cell has no night
  const CellNight* previous = nullptr;                          // the night before, if any
  int baseline_hangs = 0, baseline_n = 0, baseline_nights = 0;  // baseline_nights: runs, as many as
  int baseline_dates = 0;  // dates they ran on (several runs a date are not several nights)
  double p_worse = 1;
  bool regressed = false;
  bool verdict_changed = false;  // previous->verdict != latest->verdict
};
std::vector<CellGlance> glance(const HistoryTable& table);
// "2026-12-02" from "2026-12-02T10:45:00Z" (the night's date).
std::string night_date(const std::string& started_at);
// "nccl, driver" or "".
std::string changes_label(const std::vector<std::string>& changes);

}  // namespace hangbench::history
