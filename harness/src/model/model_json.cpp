// JSON forms of the model. Readers accept missing keys (older rows, hand-written
// fixtures) and keep the struct's defaults for them.
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

}  // namespace

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
  read_if_present(j, "metrics", t.metrics);
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
