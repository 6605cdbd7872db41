// The embedded catalog, parsed once: every entry with its measured ranges.
#include <algorithm>

#include "catalog/embedded_data.hpp"

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

const Entry* find(const std::string& id) {
  for (const auto& e : entries())
    if (e.id == id) return &e;
  return nullptr;
}

}  // namespace hangbench::catalog
