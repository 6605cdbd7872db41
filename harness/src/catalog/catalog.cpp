// The embedded catalog, parsed once: every entry with its measured ranges.
#include <algorithm>

#include "catalog/embedded_data.hpp"
#include "hangbench/stats.hpp"

namespace hangbench::catalog {

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = [] {
    std::vector<Entry> out;
    for (const auto& f : embedded_files()) {
      Entry e = parse_entry(f.text, f.file);
      apply_measured(e, nlohmann::json::parse(f.measured));
      out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
    return out;
  }();
  return all;
}

std::optional<std::pair<std::string, std::string>> hung_less_first(const std::string& a_hangs,
                                                                   const std::string& b_hangs) {
  const auto a = stats::parse_tally(a_hangs, nullptr), b = stats::parse_tally(b_hangs, nullptr);
  if (!a || !b) return std::nullopt;
  // a.k / a.n <= b.k / b.n, in whole numbers.
  if (a->k * b->n <= b->k * a->n) return std::pair{a_hangs, b_hangs};
  return std::pair{b_hangs, a_hangs};
}

const Entry* find(const std::string& id) {
  for (const auto& e : entries())
    if (e.id == id) return &e;
  return nullptr;
}

}  // namespace hangbench::catalog
