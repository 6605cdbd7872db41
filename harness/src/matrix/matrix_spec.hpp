// A matrix file as written, each value with its line, before expansion into cells.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench::matrix_detail {

struct LocatedString {
  std::string text;
  int line = 0;
};

struct AxisSpec {
  std::string name;
  std::vector<std::string> values;
  int line = 0;
};

struct FilterSpec {  // axis = value pairs of [[exclude]], match, a, b
  std::map<std::string, std::string> pairs;
  int line = 0;
};

struct CellOverrideSpec {
  FilterSpec match;
  std::optional<Expectation> expect;
  std::optional<int> trials;
  int trials_line = 0;  // where `trials` is set, for the bound on a run's trials
  std::optional<double> timeout_s;
  std::map<std::string, double> phase_timeouts_s;  // merged over the matrix's
  std::map<std::string, LocatedString> env;
  std::optional<std::vector<LocatedString>> command;
  bool command_is_array = false;
};

struct CompareSpec {
  std::string name;
  FilterSpec a, b;
  int line = 0;
};

struct MatrixSpec {
  std::string path;
  std::string name;
  std::vector<LocatedString> command;  // one string (split after templating) or the array
  bool command_is_array = false;
  int trials = 20;
  int trials_line = 0;  // where `trials` is set; 0: the default
  double timeout_s = 10;
  std::map<std::string, double> phase_timeouts_s;  // [phase_timeouts] phase = seconds
  int concurrency = 0;
  double alpha = 0.01;
  double grace_s = 2.0;
  bool stacks = true;
  bool stacks_first_hang = false;  // stacks = "first-hang"
  Expectation expect = Expectation::None;
  std::vector<LocatedString> hash;
  std::vector<AxisSpec> axes;  // in file order
  std::vector<std::pair<std::string, LocatedString>> vars;
  std::map<std::string, LocatedString> env;
  Launcher launcher;
  // `ranks = "{axis}"`: the world size templated per cell (an axis of world sizes);
  // unset when ranks is a plain integer.
  std::optional<LocatedString> launcher_ranks_template;
  std::vector<FilterSpec> excludes;
  std::vector<CellOverrideSpec> cells;
  std::vector<CompareSpec> compares;
};

// toml++ -> spec; checks keys, types and ranges. Throws ConfigError.
// `overrides` (run --set): TOML KEY=VALUE lines applied over the file before it is read.
MatrixSpec parse_matrix_spec(std::string_view text, const std::string& path,
                             const std::vector<std::string>& overrides = {});

// spec -> cells (cartesian product minus excludes, overrides, templating). Throws ConfigError.
Matrix expand_matrix(const MatrixSpec& spec, const std::map<std::string, std::string>& builtins);

}  // namespace hangbench::matrix_detail
