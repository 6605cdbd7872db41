// catalog/<id>.toml -> Entry. Every field a reader relies on is checked here, so
// that a typo fails the build's test with the file and line, not a diagnosis later.
#include <toml++/toml.h>

#include <filesystem>

#include "hangbench/catalog.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/stats.hpp"

namespace hangbench::catalog {
namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::node* at, const std::string& message) const {
    throw ConfigError(file_, at ? static_cast<int>(at->source().begin.line) : 0, message);
  }

  std::string text(const toml::table& t, const char* key, bool required = false) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(nullptr, std::string("missing field '") + key + "'");
      return "";
    }
    auto v = n->value<std::string>();
    if (!v) fail(n, std::string("'") + key + "' must be a string");
    return *v;
  }

  bool flag(const toml::table& t, const char* key, bool fallback) const {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    auto v = n->value<bool>();
    if (!v) fail(n, std::string("'") + key + "' must be true or false");
    return *v;
  }

  // A positive number of seconds (an integer or a float); `fallback` when absent.
  double seconds(const toml::table& t, const char* key, double fallback) const {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    auto v = n->value<double>();
    if (!v || *v <= 0 || *v > 3600) fail(n, std::string("'") + key + "' must be a number of seconds in (0, 3600]");
    return *v;
  }

  std::vector<std::string> texts(const toml::table& t, const char* key) const {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) fail(n, std::string("'") + key + "' must be an array of strings");
    for (const toml::node& item : *a) {
      auto v = item.value<std::string>();
      if (!v) fail(&item, std::string("'") + key + "' must hold strings only");
      out.push_back(*v);
    }
    return out;
  }

  const toml::table* table(const toml::table& t, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->as_table()) fail(n, std::string("[") + key + "] must be a table");
    return n->as_table();
  }

  template <typename F>
  void each_table(const toml::table& t, const char* key, F&& f) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const toml::array* a = n->as_array();
    if (!a) fail(n, std::string("[[") + key + "]] must be an array of tables");
    for (const toml::node& item : *a) {
      if (!item.as_table()) fail(&item, std::string("[[") + key + "]] must hold tables");
      f(*item.as_table());
    }
  }

 private:
  std::string file_;
};

Remedy remedy_of(const Reader& r, const toml::table& t) {
  Remedy m;
  m.action = r.text(t, "action", true);
  m.upgrade = r.flag(t, "upgrade", false);
  m.report = r.text(t, "report");
  m.measured = r.flag(t, "measured", !m.report.empty());
  m.why = r.text(t, "why");
  m.comparison = r.text(t, "comparison");
  m.a_hangs = r.text(t, "a_hangs");
  m.b_hangs = r.text(t, "b_hangs");
  if (m.measured && (m.report.empty() || m.comparison.empty() || m.a_hangs.empty() || m.b_hangs.empty()))
    r.fail(&t, "a measured remedy names its report, comparison, a_hangs and b_hangs");
  if (m.measured) {
    std::string error;
    const auto a = stats::parse_tally(m.a_hangs, &error);
    if (!a) r.fail(t.get("a_hangs"), "a_hangs " + error);
    const auto b = stats::parse_tally(m.b_hangs, &error);
    if (!b) r.fail(t.get("b_hangs"), "b_hangs " + error);
    if (a->k * b->n == b->k * a->n)
      r.fail(&t, "its two sides hung alike (" + m.a_hangs + " and " + m.b_hangs + "): that is no remedy");
  }
  if (!m.measured && m.why.empty()) r.fail(&t, "an unmeasured remedy says why in 'why'");
  return m;
}

}  // namespace

Entry parse_entry(const std::string& text, const std::string& file) {
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw ConfigError(file, static_cast<int>(e.source().begin.line), std::string(e.description()));
  }
  Reader r(file);
  Entry e;
  e.file = file;
  e.id = r.text(root, "id", true);
  if (std::filesystem::path(file).stem().string() != e.id)
    r.fail(root.get("id"), "the id '" + e.id + "' must be the file's name (catalog/" + e.id + ".toml)");
  e.title = r.text(root, "title", true);
  e.mechanism = r.text(root, "mechanism", true);
  if (const auto* c = r.table(root, "claimed")) {
    e.claimed_affected = r.texts(*c, "affected");
    if (!e.claimed_affected.empty() && e.claimed_affected.size() != 2)
      r.fail(c->get("affected"), "'affected' is [first, last] or []");
    e.claimed_fixed = r.text(*c, "fixed");
    e.claimed_source = r.text(*c, "source");
    e.fix_needs = r.text(*c, "fix_needs");
  }
  r.each_table(root, "upstream", [&](const toml::table& t) {
    Reference ref{r.text(t, "kind", true), r.text(t, "url", true), r.text(t, "what", true)};
    if (ref.kind != "issue" && ref.kind != "pull" && ref.kind != "commit")
      r.fail(t.get("kind"), "'kind' is issue, pull or commit, not '" + ref.kind + "'");
    e.upstream.push_back(ref);
  });
  if (const auto* t = r.table(root, "reproducer")) {
    Reproducer& p = e.reproducer;
    p.workload = r.text(*t, "workload", true);
    p.args = r.texts(*t, "args");
    p.phase = r.text(*t, "phase");
    p.phase_timeout_s = r.seconds(*t, "phase_timeout", 0);
    p.vulnerable_reference = r.text(*t, "vulnerable_reference");
    p.fixed_reference = r.text(*t, "fixed_reference");
    p.matrix = r.text(*t, "matrix");
    p.filter = r.texts(*t, "filter");
    p.note = r.text(*t, "note");
    r.text(*t, "check");  // names validate's check for a reader; the sweep takes the fields above
  }
  if (const auto* t = r.table(root, "static_check")) {
    e.static_none = r.text(*t, "none");
    e.static_check = r.text(*t, "name", e.static_none.empty());
    e.static_command = r.text(*t, "command");
    e.static_says = r.text(*t, "says");
    e.static_string = r.text(*t, "string");
    e.static_present_means = r.text(*t, "present_means", !e.static_string.empty());
    if (!e.static_present_means.empty() && e.static_present_means != "fixed" && e.static_present_means != "affected")
      r.fail(t->get("present_means"), "'present_means' is fixed or affected, not '" + e.static_present_means + "'");
    if (!e.static_none.empty() && !e.static_check.empty())
      r.fail(t, "[static_check] has either a check ('name') or 'none' with why the bytes cannot tell");
  }
  if (const auto* t = r.table(root, "diagnose")) {
    e.rules = r.texts(*t, "rules");
    e.title_contains = r.text(*t, "title_contains");
    e.summary_contains = r.text(*t, "summary_contains");
    e.facts = r.texts(*t, "facts");
    e.diagnose_note = r.text(*t, "note");
    e.only_in_affected_range = r.flag(*t, "only_in_affected_range", false);
    if (e.rules.empty() && e.diagnose_note.empty()) r.fail(t, "[diagnose] without rules says why in 'note'");
  }
  r.each_table(root, "remedies", [&](const toml::table& t) { e.remedies.push_back(remedy_of(r, t)); });
  if (const auto* t = r.table(root, "measured")) {
    e.measured.sweep = r.text(*t, "sweep");
    e.measured.also = r.texts(*t, "also");
    r.each_table(*t, "runs", [&](const toml::table& run) {
      MeasuredCell c;
      c.report = r.text(run, "report", true);
      c.cell = r.text(run, "cell", true);
      e.measured.cells.push_back(c);
    });
  }
  return e;
}

}  // namespace hangbench::catalog
