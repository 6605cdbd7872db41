// JSON forms of the model. Readers accept missing keys (older rows, hand-written
// fixtures) and keep the struct's defaults for them.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "hangbench/model.hpp"

namespace hangbench {
namespace {

template <typename T>
void read_if_present(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(out);
}

std::string launcher_kind_name(LauncherKind k) {
  switch (k) {
    case LauncherKind::Process:
      return "process";
    case LauncherKind::Mpirun:
      return "mpirun";
    case LauncherKind::Srun:
      return "srun";
    case LauncherKind::Torchrun:
      return "torchrun";
  }
  return "process";
}

LauncherKind launcher_kind_from_name(const std::string& s) {
  if (s == "mpirun") return LauncherKind::Mpirun;
  if (s == "srun") return LauncherKind::Srun;
  if (s == "torchrun") return LauncherKind::Torchrun;
  if (s == "process" || s.empty()) return LauncherKind::Process;
  throw std::invalid_argument("unknown launcher kind '" + s + "'");
}

Expectation expectation_from_name(const std::string& s) {
  if (s == "hang") return Expectation::Hang;
  if (s == "no-hang") return Expectation::NoHang;
  return Expectation::None;
}

// The harness's facts as metrics: their keys, and their values as the executor
// has always written them (stores and reports hold these forms).
constexpr const char* kCleanup = "harness.cleanup";
constexpr const char* kLeftoverPids = "harness.leftover_pids";
constexpr const char* kPidNamespace = "harness.pid_namespace";
constexpr const char* kUnmappedPids = "harness.unmapped_namespace_pids";
constexpr const char* kHangDeadline = "harness.hang_deadline";
constexpr const char* kCgroup = "harness.cgroup";

std::string deadline_text(const HangDeadline& d) {
  return fmt::format("{} + {:g} s{}", d.phase, d.seconds, d.learned.empty() ? "" : " (" + d.learned + ")");
}

// deadline_text's inverse: "PHASE + SECONDS s", then " (WHY)" for a learned one.
std::optional<HangDeadline> deadline_from_text(const std::string& s) {
  const size_t plus = s.find(" + ");
  if (plus == std::string::npos) return std::nullopt;
  HangDeadline d;
  d.phase = s.substr(0, plus);
  const char* first = s.data() + plus + 3;
  const char* last = s.data() + s.size();
  const auto [end, ec] = std::from_chars(first, last, d.seconds);
  if (ec != std::errc()) return std::nullopt;
  const std::string rest(end, last);
  if (rest == " s") return d;
  if (rest.size() < 5 || rest.compare(0, 4, " s (") != 0 || rest.back() != ')') return std::nullopt;
  d.learned = rest.substr(4, rest.size() - 5);
  return d;
}

void write_facts(const HarnessFacts& f, nlohmann::json& metrics) {
  if (f.cleanup) metrics[kCleanup] = to_string(*f.cleanup);
  if (!f.leftover_pids.empty()) metrics[kLeftoverPids] = f.leftover_pids;
  if (f.pid_namespace) metrics[kPidNamespace] = true;
  if (!f.unmapped_namespace_pids.empty()) metrics[kUnmappedPids] = f.unmapped_namespace_pids;
  if (f.hang_deadline) metrics[kHangDeadline] = deadline_text(*f.hang_deadline);
  if (f.cgroup) metrics[kCgroup] = true;
}

bool pid_list(const nlohmann::json& v) {
  return v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_number_integer(); });
}

// One "harness.*" metric into `f`; false for a key or a value of a kind it does not know.
bool read_fact(const std::string& key, const nlohmann::json& v, HarnessFacts& f) {
  if (key == kCleanup && v.is_string()) return (f.cleanup = cleanup_step_from_string(v.get<std::string>())).has_value();
  if (key == kLeftoverPids && pid_list(v)) return v.get_to(f.leftover_pids), true;
  if (key == kPidNamespace && v.is_boolean()) return v.get_to(f.pid_namespace), true;
  if (key == kUnmappedPids && pid_list(v)) return v.get_to(f.unmapped_namespace_pids), true;
  if (key == kHangDeadline && v.is_string())
    return (f.hang_deadline = deadline_from_text(v.get<std::string>())).has_value();
  if (key == kCgroup && v.is_boolean()) return v.get_to(f.cgroup), true;
  return false;
}

// Moves the "harness.*" metrics of a stored trial into its facts: each one that
// the facts write back exactly as it stands. Any other stays a metric as it was,
// so that a row written before the facts were typed reads back, and writes, the same.
void take_harness_facts(nlohmann::json& metrics, HarnessFacts& facts) {
  if (!metrics.is_object()) return;
  for (auto it = metrics.begin(); it != metrics.end();) {
    if (it.key().rfind("harness.", 0) != 0) {
      ++it;
      continue;
    }
    HarnessFacts read = facts;
    nlohmann::json written = nlohmann::json::object();
    if (read_fact(it.key(), it.value(), read)) write_facts(read, written);
    if (auto again = written.find(it.key()); again != written.end() && *again == it.value()) {
      facts = std::move(read);
      it = metrics.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

nlohmann::json metrics_json(const TrialResult& t) {
  nlohmann::json metrics = t.metrics;
  write_facts(t.harness, metrics);
  return metrics;
}

void read_metrics_json(nlohmann::json metrics, TrialResult& t) {
  take_harness_facts(metrics, t.harness);
  t.metrics = std::move(metrics);
}

std::string workload_infra_error(const TrialResult& t) {
  const auto it = t.metrics.find("infra_error");
  if (it == t.metrics.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array() && !it->empty() && (*it)[0].is_string()) return (*it)[0].get<std::string>();
  return "";
}

void from_json(const nlohmann::json& j, PhaseEvent& p) {
  read_if_present(j, "name", p.name);
  read_if_present(j, "t", p.t);
  read_if_present(j, "pid", p.pid);
  read_if_present(j, "rank", p.rank);
  read_if_present(j, "host", p.host);
}

void from_json(const nlohmann::json& j, TrialResult& t) {
  read_if_present(j, "cell_id", t.cell_id);
  read_if_present(j, "index", t.index);
  std::string outcome;
  read_if_present(j, "outcome", outcome);
  t.outcome = outcome_from_string(outcome).value_or(Outcome::Infra);
  read_if_present(j, "exit_code", t.exit_code);
  read_if_present(j, "signal", t.signal);
  read_if_present(j, "started_at", t.started_at);
  read_if_present(j, "wall_s", t.wall_s);
  read_if_present(j, "phases", t.phases);
  if (auto it = j.find("metrics"); it != j.end() && !it->is_null()) read_metrics_json(*it, t);
  read_if_present(j, "hung_phase", t.hung_phase);
  read_if_present(j, "evidence_dir", t.evidence_dir);
  read_if_present(j, "evidence_summary", t.evidence_summary);
  read_if_present(j, "host", t.host);
  read_if_present(j, "survivors", t.survivors);
  read_if_present(j, "infra_error", t.infra_error);
}

void from_json(const nlohmann::json& j, Provenance& p) {
  read_if_present(j, "hangbench_version", p.hangbench_version);
  read_if_present(j, "hangbench_commit", p.hangbench_commit);
  read_if_present(j, "argv", p.argv);
  read_if_present(j, "host", p.host);
  read_if_present(j, "kernel", p.kernel);
  read_if_present(j, "gpu", p.gpu);
  read_if_present(j, "driver", p.driver);
  read_if_present(j, "cuda", p.cuda);
  read_if_present(j, "started_at", p.started_at);
  read_if_present(j, "matrix_path", p.matrix_path);
  read_if_present(j, "matrix_sha256", p.matrix_sha256);
  read_if_present(j, "library_hashes", p.library_hashes);
  read_if_present(j, "shard_commands", p.shard_commands);
  read_if_present(j, "environment", p.environment);
  read_if_present(j, "trial_isolation", p.trial_isolation);
}

void to_json(nlohmann::json& j, const Cell& c) {
  j = {{"id", c.id},
       {"params", c.params},
       {"argv", c.argv},
       {"env", c.env},
       {"launcher",
        {{"kind", launcher_kind_name(c.launcher.kind)}, {"ranks", c.launcher.ranks}, {"args", c.launcher.extra_args}}},
       {"trials", c.trials},
       {"timeout_s", c.timeout_s},
       {"expect", to_string(c.expect)},
       {"hash_files", c.hash_files}};
  if (!c.phase_timeouts_s.empty()) j["phase_timeouts_s"] = c.phase_timeouts_s;
}
void from_json(const nlohmann::json& j, Cell& c) {
  read_if_present(j, "id", c.id);
  read_if_present(j, "params", c.params);
  read_if_present(j, "argv", c.argv);
  read_if_present(j, "env", c.env);
  if (auto it = j.find("launcher"); it != j.end() && it->is_object()) {
    std::string kind;
    read_if_present(*it, "kind", kind);
    c.launcher.kind = launcher_kind_from_name(kind);
    read_if_present(*it, "ranks", c.launcher.ranks);
    read_if_present(*it, "args", c.launcher.extra_args);
  }
  read_if_present(j, "trials", c.trials);
  read_if_present(j, "timeout_s", c.timeout_s);
  read_if_present(j, "phase_timeouts_s", c.phase_timeouts_s);
  std::string expect;
  read_if_present(j, "expect", expect);
  c.expect = expectation_from_name(expect);
  read_if_present(j, "hash_files", c.hash_files);
}

void to_json(nlohmann::json& j, const Comparison& c) { j = {{"name", c.name}, {"a", c.a}, {"b", c.b}}; }
void from_json(const nlohmann::json& j, Comparison& c) {
  read_if_present(j, "name", c.name);
  read_if_present(j, "a", c.a);
  read_if_present(j, "b", c.b);
}

void to_json(nlohmann::json& j, const Matrix& m) {
  j = {{"path", m.path},   {"sha256", m.sha256},           {"name", m.name},
       {"cells", m.cells}, {"comparisons", m.comparisons}, {"concurrency", m.concurrency},
       {"alpha", m.alpha}, {"grace_s", m.grace_s},         {"capture_stacks", m.capture_stacks}};
}
void from_json(const nlohmann::json& j, Matrix& m) {
  read_if_present(j, "path", m.path);
  read_if_present(j, "sha256", m.sha256);
  read_if_present(j, "name", m.name);
  read_if_present(j, "cells", m.cells);
  read_if_present(j, "comparisons", m.comparisons);
  read_if_present(j, "concurrency", m.concurrency);
  read_if_present(j, "alpha", m.alpha);
  read_if_present(j, "grace_s", m.grace_s);
  read_if_present(j, "capture_stacks", m.capture_stacks);
}

}  // namespace hangbench
