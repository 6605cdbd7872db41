// What a snapshot shows: findings, from a small table of rules for the known hang
// shapes and the wait-for graph's generic patterns. The explain layer's core type.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// How much a finding weighs: a hang (no progress possible), a risk (will hang if ...),
// a note, or the plumbing of a launcher (how it works, never the job's hang).
enum class Severity { Hang, Risk, Note, Plumbing };
std::string to_string(Severity s);  // "hang", "risk", "note", "plumbing"
// The inverse, for findings read back from JSON; throws std::invalid_argument otherwise.
Severity severity_from_string(const std::string& text);

struct Finding {
  std::string rule;   // stable id: "nccl-descriptor-alias", "mpi-gil", "stopped", ...
  std::string title;  // short name of the shape
  Severity severity = Severity::Note;
  std::string summary;             // one paragraph in words
  std::vector<std::string> facts;  // the facts that triggered the rule
  std::vector<int> pids;           // the processes concerned: the one that waits first, then its holders
  std::vector<int> tids;           // the waiting threads of pids[0], the one to name first
  std::vector<int> ranks;          // the ranks concerned (a missing rank: the ones missing), when known
  std::string catalog;             // the known hang (catalog/<id>.toml) this shape is, "" when none
};

// One rule: reads the snapshot, returns zero or more findings.
struct Rule {
  std::string id;
  std::string description;
  std::function<std::vector<Finding>(const Snapshot&)> match;
};

const std::vector<Rule>& rule_table();
std::vector<Finding> find_hang_shapes(const Snapshot& s);

}  // namespace hangbench::diagnose
