// MatrixSpec -> Matrix: the cartesian product of the axes in file order, minus
// [[exclude]], then [[cell]] overrides in file order, then templating.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "hangbench/matrix.hpp"
#include "matrix/matrix_spec.hpp"
#include "matrix/template.hpp"

namespace hangbench::matrix_detail {
namespace {

const std::set<std::string> kPerTrialNames = {"trial_dir", "trial"};

bool matches(const std::map<std::string, std::string>& filter, const std::map<std::string, std::string>& params) {
  return params_match(params, filter);
}

class Expander {
 public:
  Expander(const MatrixSpec& spec, const std::map<std::string, std::string>& builtins)
      : spec_(spec), builtins_(builtins) {}

  Matrix run() {
    for (const auto& f : spec_.excludes) check_filter(f, "[[exclude]]");
    for (const auto& c : spec_.cells) check_filter(c.match, "[[cell]] match");
    for (const auto& c : spec_.compares) {
      check_filter(c.a, "[[compare]] a");
      check_filter(c.b, "[[compare]] b");
    }
    Matrix m;
    m.path = spec_.path;
    m.name = spec_.name;
    m.concurrency = spec_.concurrency;
    m.alpha = spec_.alpha;
    m.grace_s = spec_.grace_s;
    m.capture_stacks = spec_.stacks;
    m.stacks_first_hang_only = spec_.stacks_first_hang;
    std::vector<bool> override_used(spec_.cells.size(), false);
    long long total_trials = 0;
    for (const auto& params : combinations()) {
      bool excluded = false;
      for (const auto& f : spec_.excludes) excluded = excluded || matches(f.pairs, params);
      if (excluded) continue;
      int trials_line = spec_.trials_line;
      m.cells.push_back(make_cell(params, override_used, trials_line));
      total_trials += m.cells.back().trials;
      if (total_trials > kMaxTotalTrials) {
        fail(trials_line,
             fmt::format("the matrix plans more than {} trials in all (at most {} in a run, over "
                         "all cells): {} cell(s) so far, the last of them ({}) with trials = {}; lower "
                         "trials or split the matrix",
                         kMaxTotalTrials, kMaxTotalTrials, m.cells.size(), m.cells.back().id, m.cells.back().trials));
      }
    }
    if (m.cells.empty()) fail(1, "every combination of the axes is excluded: the matrix has no cells");
    for (size_t i = 0; i < spec_.cells.size(); ++i) {
      if (!override_used[i]) fail(spec_.cells[i].match.line, "[[cell]] match selects no cell");
    }
    for (const auto& c : spec_.compares) m.comparisons.push_back(make_comparison(c));
    return m;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const { throw ConfigError(spec_.path, line, message); }

  const AxisSpec* axis(const std::string& name) const {
    for (const auto& a : spec_.axes) {
      if (a.name == name) return &a;
    }
    return nullptr;
  }

  void check_filter(const FilterSpec& f, const std::string& what) const {
    for (const auto& [name, value] : f.pairs) {
      const AxisSpec* a = axis(name);
      if (!a) fail(f.line, what + " names '" + name + "', which is not an axis");
      if (std::find(a->values.begin(), a->values.end(), value) == a->values.end()) {
        fail(f.line, what + " uses " + name + " = '" + value + "', which is not a value of that axis");
      }
    }
  }

  std::vector<std::map<std::string, std::string>> combinations() const {
    std::vector<std::map<std::string, std::string>> out(1);
    for (const auto& a : spec_.axes) {
      std::vector<std::map<std::string, std::string>> next;
      for (const auto& partial : out) {
        for (const auto& v : a.values) {
          auto p = partial;
          p[a.name] = v;
          next.push_back(std::move(p));
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::string cell_id(const std::map<std::string, std::string>& params) const {
    std::string id;
    for (const auto& a : spec_.axes) id += (id.empty() ? "" : ",") + a.name + "=" + params.at(a.name);
    return id.empty() ? "default" : id;
  }

  std::string expand(const LocatedString& s, const std::map<std::string, std::string>& values) const {
    std::optional<std::string> unknown;
    std::string out = expand_template(s.text, values, kPerTrialNames, unknown);
    if (unknown) fail(s.line, "unknown template name {" + *unknown + "}");
    return out;
  }

  // Values for templating one cell: built-ins, axes, {cell}, then [vars] (which may
  // use axes and each other, in any order).
  std::map<std::string, std::string> template_values(const std::map<std::string, std::string>& params,
                                                     const std::string& id) const {
    auto values = builtins_;
    for (const auto& [k, v] : params) values[k] = v;
    values["cell"] = id;
    std::vector<std::pair<std::string, LocatedString>> pending = spec_.vars;
    while (!pending.empty()) {
      std::vector<std::pair<std::string, LocatedString>> still;
      for (const auto& [name, text] : pending) {
        std::optional<std::string> unknown;
        std::string out = expand_template(text.text, values, kPerTrialNames, unknown);
        if (unknown)
          still.emplace_back(name, text);
        else
          values[name] = out;
      }
      if (still.size() == pending.size()) expand(still.front().second, values);  // reports the unknown name
      pending = std::move(still);
    }
    return values;
  }

  std::vector<std::string> command(const std::vector<LocatedString>& cmd, bool is_array,
                                   const std::map<std::string, std::string>& values) const {
    std::vector<std::string> argv;
    if (is_array) {
      for (const auto& part : cmd) argv.push_back(expand(part, values));
      return argv;
    }
    std::istringstream words(expand(cmd.front(), values));
    for (std::string w; words >> w;) argv.push_back(w);
    if (argv.empty()) fail(cmd.front().line, "command is empty after templating");
    return argv;
  }

  // `trials_line` becomes the line that set the cell's trials (a [[cell]]'s, or the matrix's).
  Cell make_cell(const std::map<std::string, std::string>& params, std::vector<bool>& override_used,
                 int& trials_line) const {
    Cell c;
    c.params = params;
    c.id = cell_id(params);
    c.launcher = spec_.launcher;
    c.trials = spec_.trials;
    c.timeout_s = spec_.timeout_s;
    c.phase_timeouts_s = spec_.phase_timeouts_s;
    c.expect = spec_.expect;
    const std::vector<LocatedString>* cmd = &spec_.command;
    bool cmd_is_array = spec_.command_is_array;
    std::map<std::string, LocatedString> env = spec_.env;
    for (size_t i = 0; i < spec_.cells.size(); ++i) {
      const auto& o = spec_.cells[i];
      if (!matches(o.match.pairs, params)) continue;
      override_used[i] = true;
      if (o.expect) c.expect = *o.expect;
      if (o.trials) {
        c.trials = *o.trials;
        trials_line = o.trials_line;
      }
      if (o.timeout_s) c.timeout_s = *o.timeout_s;
      for (const auto& [phase, seconds] : o.phase_timeouts_s) c.phase_timeouts_s[phase] = seconds;
      for (const auto& [k, v] : o.env) env[k] = v;
      if (o.command) {
        cmd = &*o.command;
        cmd_is_array = o.command_is_array;
      }
    }
    auto values = template_values(params, c.id);
    if (spec_.launcher_ranks_template) c.launcher.ranks = ranks(*spec_.launcher_ranks_template, values);
    c.argv = command(*cmd, cmd_is_array, values);
    for (const auto& [k, v] : env) c.env[k] = expand(v, values);
    for (const auto& h : spec_.hash) c.hash_files.push_back(expand(h, values));
    return c;
  }

  // A templated launcher.ranks must come out as a whole number of ranks.
  int ranks(const LocatedString& text, const std::map<std::string, std::string>& values) const {
    const std::string out = expand(text, values);
    int n = 0;
    auto [end, ec] = std::from_chars(out.data(), out.data() + out.size(), n);
    if (ec != std::errc() || end != out.data() + out.size() || n <= 0 || n > 100000) {
      fail(text.line,
           "launcher.ranks \"" + text.text + "\" must give a whole number of ranks in 1..100000, got \"" + out + "\"");
    }
    return n;
  }

  Comparison make_comparison(const CompareSpec& c) const {
    auto describe = [](const std::map<std::string, std::string>& f) {
      std::string s;
      for (const auto& [k, v] : f) s += (s.empty() ? "" : ",") + k + "=" + v;
      return s;
    };
    return Comparison{c.name.empty() ? describe(c.a.pairs) + " vs " + describe(c.b.pairs) : c.name, c.a.pairs,
                      c.b.pairs};
  }

  const MatrixSpec& spec_;
  const std::map<std::string, std::string>& builtins_;
};

}  // namespace

Matrix expand_matrix(const MatrixSpec& spec, const std::map<std::string, std::string>& builtins) {
  return Expander(spec, builtins).run();
}

}  // namespace hangbench::matrix_detail
