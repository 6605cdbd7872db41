// The HTML form of the history lives in its own file; render_history dispatches.
#pragma once

#include <string>

#include "hangbench/history.hpp"

namespace hangbench::history {

std::string render_history_html(const HistoryTable& table);
// "2026-12-02" from "2026-12-02T10:45:00Z" (the night's date).
std::string night_date(const std::string& started_at);
// "nccl, driver" or "".
std::string changes_label(const std::vector<std::string>& changes);

}  // namespace hangbench::history
