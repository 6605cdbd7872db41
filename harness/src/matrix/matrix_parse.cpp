// Reads the TOML into a MatrixSpec. Every check names file:line; nothing is
// guessed: an unknown key or a wrong type stops the run before it starts.
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include <algorithm>
#include <set>

#include "hangbench/matrix.hpp"
#include "matrix/matrix_spec.hpp"

namespace hangbench::matrix_detail {
namespace {

// The node's line in the file; 0 (no line) for a value given by `run --set`.
int line_of(const toml::node& node) {
  const auto& path = node.source().path;
  if (path && path->rfind("--set", 0) == 0) return 0;
  return static_cast<int>(node.source().begin.line);
}

class SpecReader {
 public:
  explicit SpecReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(int line, const std::string& message) const { throw ConfigError(path_, line, message); }

  void check_keys(const toml::table& table, const std::set<std::string>& allowed, const std::string& where) const {
    for (auto&& [key, node] : table) {
      if (!allowed.count(std::string(key.str()))) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(line_of(node), "unknown key '" + std::string(key.str()) + "' in " + where + " (allowed: " + list + ")");
      }
    }
  }

  // A NUL ("\u0000") would cut the string where it becomes an argument or an
  // environment entry: what runs would not be what the file says.
  const std::string& without_nul(const toml::node& node, const std::string& text, const std::string& what) const {
    if (text.find('\0') != std::string::npos) fail(line_of(node), what + " holds a NUL character (\\u0000)");
    return text;
  }

  std::string string_value(const toml::node& node, const std::string& what) const {
    if (auto s = node.as_string()) return without_nul(node, s->get(), what);
    fail(line_of(node), what + " must be a string");
  }

  // Axis and filter values: strings, integers and booleans, kept as text.
  std::string scalar_value(const toml::node& node, const std::string& what) const {
    if (auto s = node.as_string()) return without_nul(node, s->get(), what);
    if (auto i = node.as_integer()) return std::to_string(i->get());
    if (auto b = node.as_boolean()) return b->get() ? "true" : "false";
    fail(line_of(node), what + " must be a string, an integer or a boolean");
  }

  int positive_int(const toml::node& node, const std::string& what) const {
    auto i = node.as_integer();
    if (!i) fail(line_of(node), what + " must be an integer");
    if (i->get() <= 0) fail(line_of(node), what + " must be > 0, got " + std::to_string(i->get()));
    if (i->get() > kMaxTrials) fail(line_of(node), what + " must be at most " + std::to_string(kMaxTrials));
    return static_cast<int>(i->get());
  }

  double number(const toml::node& node, const std::string& what) const {
    if (auto f = node.as_floating_point()) return f->get();
    if (auto i = node.as_integer()) return static_cast<double>(i->get());
    fail(line_of(node), what + " must be a number");
  }

  // Timeouts: finite and bounded, so that every trial ends.
  double timeout(const toml::node& node, const std::string& what) const {
    double v = number(node, what);
    if (auto problem = timeout_problem(v); !problem.empty()) fail(line_of(node), what + " " + problem);
    return v;
  }

  Expectation expectation(const toml::node& node) const {
    std::string s = string_value(node, "expect");
    if (s == "hang") return Expectation::Hang;
    if (s == "no-hang") return Expectation::NoHang;
    if (s == "none") return Expectation::None;
    fail(line_of(node), "expect must be \"hang\", \"no-hang\" or \"none\", got \"" + s + "\"");
  }

  const toml::table& table(const toml::node& node, const std::string& what) const {
    if (auto t = node.as_table()) return *t;
    fail(line_of(node), what + " must be a table");
  }

  const toml::array& array(const toml::node& node, const std::string& what) const {
    if (auto a = node.as_array()) return *a;
    fail(line_of(node), what + " must be an array");
  }

  std::vector<LocatedString> string_list(const toml::node& node, const std::string& what) const {
    std::vector<LocatedString> out;
    for (const auto& item : array(node, what)) out.push_back({string_value(item, what + " entries"), line_of(item)});
    return out;
  }

  std::map<std::string, LocatedString> string_table(const toml::node& node, const std::string& what) const {
    std::map<std::string, LocatedString> out;
    for (auto&& [key, value] : table(node, what)) {
      out[std::string(key.str())] = {string_value(value, what + "." + std::string(key.str())), line_of(value)};
    }
    return out;
  }

  // An environment table: each name a non-empty NAME without '=' or NUL (execve
  // would read "A=B" as a name A, and a NUL cuts the entry).
  std::map<std::string, LocatedString> env_table(const toml::node& node, const std::string& what) const {
    for (auto&& [key, value] : table(node, what)) {
      const std::string name(key.str());
      const int line = line_of(value);
      if (name.empty()) fail(line, what + " has an empty variable name");
      if (name.find('=') != std::string::npos)
        fail(line, what + " name '" + name + "' holds '='; an environment variable's name cannot");
      if (name.find('\0') != std::string::npos) fail(line, what + " has a variable name with a NUL character");
    }
    return string_table(node, what);
  }

  FilterSpec filter(const toml::table& t, int line, const std::string& what) const {
    FilterSpec f;
    f.line = line;
    for (auto&& [key, value] : t)
      f.pairs[std::string(key.str())] = scalar_value(value, what + "." + std::string(key.str()));
    if (f.pairs.empty()) fail(line, what + " is empty");
    return f;
  }

  // The command: a string split on spaces after templating, or an array of strings.
  void command(const toml::node& node, std::vector<LocatedString>& out, bool& is_array) const {
    if (node.is_array()) {
      out = string_list(node, "command");
      is_array = true;
      if (out.empty()) fail(line_of(node), "command is empty");
    } else {
      out = {{string_value(node, "command"), line_of(node)}};
      is_array = false;
      if (out[0].text.find_first_not_of(" \t") == std::string::npos) fail(line_of(node), "command is empty");
    }
  }

  std::vector<AxisSpec> axes(const toml::table& t) const {
    std::vector<AxisSpec> out;
    for (auto&& [key, node] : t) {
      AxisSpec axis{std::string(key.str()), {}, line_of(node)};
      const auto& values = array(node, "axis '" + axis.name + "'");
      if (values.empty()) fail(axis.line, "axis '" + axis.name + "' has no values");
      std::set<std::string> seen;
      for (const auto& v : values) {
        std::string text = scalar_value(v, "axis '" + axis.name + "' value");
        if (text.size() > kMaxAxisValueBytes) {
          fail(line_of(v), "axis '" + axis.name + "' has a value of " + std::to_string(text.size()) +
                               " bytes; at most " + std::to_string(kMaxAxisValueBytes) +
                               " (values name cells and their folders)");
        }
        if (!seen.insert(text).second) fail(line_of(v), "axis '" + axis.name + "' lists '" + text + "' twice");
        axis.values.push_back(text);
      }
      out.push_back(std::move(axis));
    }
    // toml++ tables are sorted by key; the cell id follows the file's order.
    std::stable_sort(out.begin(), out.end(), [](const AxisSpec& a, const AxisSpec& b) { return a.line < b.line; });
    return out;
  }

  Launcher launcher(const toml::table& t, std::optional<LocatedString>& ranks_template) const {
    check_keys(t, {"kind", "ranks", "args"}, "[launcher]");
    Launcher l;
    if (auto n = t.get("kind")) {
      std::string kind = string_value(*n, "launcher.kind");
      if (kind == "process")
        l.kind = LauncherKind::Process;
      else if (kind == "mpirun")
        l.kind = LauncherKind::Mpirun;
      else if (kind == "srun")
        l.kind = LauncherKind::Srun;
      else if (kind == "torchrun")
        l.kind = LauncherKind::Torchrun;
      else
        fail(line_of(*n),
             "launcher.kind must be \"process\", \"mpirun\", \"srun\" or \"torchrun\", got \"" + kind + "\"");
    }
    if (auto n = t.get("ranks")) {
      if (auto s = n->as_string())  // e.g. "{ranks}": resolved per cell, after templating
        ranks_template = LocatedString{s->get(), line_of(*n)};
      else
        l.ranks = positive_int(*n, "launcher.ranks");
    }
    if (auto n = t.get("args")) {
      for (auto& s : string_list(*n, "launcher.args")) l.extra_args.push_back(s.text);
    }
    return l;
  }

  // { phase = seconds, ... }: phase names as the workload reports them.
  std::map<std::string, double> phase_timeouts(const toml::node& node, const std::string& what) const {
    std::map<std::string, double> out;
    for (const auto& [key, value] : table(node, what)) {
      out[std::string(key.str())] = timeout(value, what + "." + std::string(key.str()));
    }
    return out;
  }

  CellOverrideSpec cell_override(const toml::table& t, int line) const {
    check_keys(t, {"match", "expect", "trials", "timeout", "phase_timeouts", "env", "command"}, "[[cell]]");
    CellOverrideSpec c;
    auto match = t.get("match");
    if (!match) fail(line, "[[cell]] needs a 'match' table of axis = value");
    c.match = filter(table(*match, "[[cell]] match"), line_of(*match), "[[cell]] match");
    if (auto n = t.get("expect")) c.expect = expectation(*n);
    if (auto n = t.get("trials")) {
      c.trials = positive_int(*n, "trials");
      c.trials_line = line_of(*n);
    }
    if (auto n = t.get("timeout")) c.timeout_s = timeout(*n, "timeout");
    if (auto n = t.get("phase_timeouts")) c.phase_timeouts_s = phase_timeouts(*n, "[[cell]] phase_timeouts");
    if (auto n = t.get("env")) c.env = env_table(*n, "[[cell]] env");
    if (auto n = t.get("command")) {
      c.command.emplace();
      command(*n, *c.command, c.command_is_array);
    }
    return c;
  }

  CompareSpec compare(const toml::table& t, int line) const {
    check_keys(t, {"name", "a", "b"}, "[[compare]]");
    CompareSpec c;
    c.line = line;
    for (const char* side : {"a", "b"}) {
      auto n = t.get(side);
      if (!n) fail(line, std::string("[[compare]] needs '") + side + "' = { axis = value, ... }");
      FilterSpec f =
          filter(table(*n, std::string("[[compare]] ") + side), line_of(*n), std::string("[[compare]] ") + side);
      (side[0] == 'a' ? c.a : c.b) = std::move(f);
    }
    if (auto n = t.get("name")) c.name = string_value(*n, "[[compare]] name");
    return c;
  }

  // Arrays of tables ([[exclude]] etc.) have no source of their own in toml++; each
  // element does.
  template <typename Fn>
  void each_table(const toml::node& node, const std::string& what, Fn&& fn) const {
    for (const auto& item : array(node, what)) fn(table(item, what), line_of(item));
  }

  MatrixSpec read(const toml::table& root) const {
    check_keys(root,
               {"name", "description", "command", "trials", "timeout", "phase_timeouts", "concurrency", "alpha",
                "grace", "stacks", "expect", "hash", "axes", "vars", "env", "launcher", "exclude", "cell", "compare"},
               "the matrix");
    MatrixSpec spec;
    spec.path = path_;
    auto name = root.get("name");
    if (!name) fail(1, "missing required key 'name'");
    spec.name = string_value(*name, "name");
    if (auto n = root.get("description")) string_value(*n, "description");
    auto cmd = root.get("command");
    if (!cmd) fail(1, "missing required key 'command'");
    command(*cmd, spec.command, spec.command_is_array);
    if (auto n = root.get("trials")) {
      spec.trials = positive_int(*n, "trials");
      spec.trials_line = line_of(*n);
    }
    if (auto n = root.get("timeout")) spec.timeout_s = timeout(*n, "timeout");
    if (auto n = root.get("phase_timeouts")) spec.phase_timeouts_s = phase_timeouts(*n, "[phase_timeouts]");
    if (auto n = root.get("concurrency")) {
      auto i = n->as_integer();
      if (!i) fail(line_of(*n), "concurrency must be an integer");
      if (i->get() < 0 || i->get() > kMaxConcurrency)
        fail(line_of(*n),
             "concurrency must be between 0 and " + std::to_string(kMaxConcurrency) + " (0 = number of cores)");
      spec.concurrency = static_cast<int>(i->get());
    }
    if (auto n = root.get("alpha")) {
      spec.alpha = number(*n, "alpha");
      if (!(spec.alpha > 0 && spec.alpha < 1)) fail(line_of(*n), "alpha must be between 0 and 1 (exclusive)");
    }
    if (auto n = root.get("grace")) {
      spec.grace_s = number(*n, "grace");
      if (!(spec.grace_s >= 0 && spec.grace_s <= kMaxGraceS)) {
        fail(line_of(*n), "grace must be between 0 and " + std::to_string(static_cast<int>(kMaxGraceS)) + " seconds");
      }
    }
    if (auto n = root.get("stacks")) {
      if (auto word = n->as_string(); word && word->get() == "first-hang") {
        spec.stacks = true;
        spec.stacks_first_hang = true;
      } else if (auto b = n->as_boolean()) {
        spec.stacks = b->get();
      } else {
        fail(line_of(*n), "stacks must be true, false or \"first-hang\"");
      }
    }
    if (auto n = root.get("expect")) spec.expect = expectation(*n);
    if (auto n = root.get("hash")) spec.hash = string_list(*n, "hash");
    if (auto n = root.get("axes")) spec.axes = axes(table(*n, "[axes]"));
    if (auto n = root.get("vars")) {
      std::vector<std::pair<std::string, LocatedString>> vars;
      for (auto& [k, v] : string_table(*n, "[vars]")) vars.emplace_back(k, v);
      spec.vars = std::move(vars);
    }
    if (auto n = root.get("env")) spec.env = env_table(*n, "[env]");
    if (auto n = root.get("launcher")) spec.launcher = launcher(table(*n, "[launcher]"), spec.launcher_ranks_template);
    if (auto n = root.get("exclude")) {
      each_table(*n, "[[exclude]]",
                 [&](const toml::table& t, int line) { spec.excludes.push_back(filter(t, line, "[[exclude]]")); });
    }
    if (auto n = root.get("cell")) {
      each_table(*n, "[[cell]]", [&](const toml::table& t, int line) { spec.cells.push_back(cell_override(t, line)); });
    }
    if (auto n = root.get("compare")) {
      each_table(*n, "[[compare]]", [&](const toml::table& t, int line) { spec.compares.push_back(compare(t, line)); });
    }
    return spec;
  }

 private:
  std::string path_;
};

}  // namespace

namespace {

// Puts every value of `from` at its dotted place in `into`: tables merge key by
// key, anything else (a value, an array, an array of tables) replaces.
void merge_into(toml::table& into, const toml::table& from) {
  for (const auto& [key, node] : from) {
    toml::node* old = into.get(key);
    if (const auto* sub = node.as_table(); sub && old && old->is_table()) {
      merge_into(*old->as_table(), *sub);
    } else if (const auto* values = node.as_array(); values && old && old->is_array()) {
      // In place: the array keeps its line, which orders the axes (and so cell ids).
      toml::array& kept = *old->as_array();
      kept.clear();
      for (const auto& v : *values) kept.push_back(v);
    } else {
      into.insert_or_assign(key, node);
    }
  }
}

// One --set: a TOML key/value line, e.g. `stacks=false` or `axes.nccl=["2.17.1"]`.
void apply_override(toml::table& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError("--set wants KEY=VALUE with VALUE in TOML, e.g. trials=5 or axes.nccl=[\"2.17.1\"]; got '" +
                     assignment + "'");
  }
  try {
    merge_into(root, toml::parse(assignment, "--set " + assignment.substr(0, eq)));
  } catch (const toml::parse_error& e) {
    throw UsageError("--set " + assignment + ": " + std::string(e.description()) +
                     " (VALUE is TOML: quote strings, e.g. name=\"x\")");
  }
}

}  // namespace

MatrixSpec parse_matrix_spec(std::string_view text, const std::string& path,
                             const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(path, static_cast<int>(e.source().begin.line), std::string(e.description()));
  }
  for (const auto& assignment : overrides) apply_override(root, assignment);
  return SpecReader(path).read(root);
}

}  // namespace hangbench::matrix_detail
