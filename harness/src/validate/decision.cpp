// The verdict rule: trials first, then the static reading that names the verdict.
// docs/validate.md states it in words; validate_decision_test.cpp (beside it)
// covers every combination.
#include <fmt/format.h>

#include "hangbench/validate.hpp"

namespace hangbench::validate {
namespace {

std::string rate(const ArmTally& a) { return fmt::format("{}/{}", a.teardown_hangs, a.counted()); }

// "7 of 7 trials stopped before the teardown began (7 hung in phase 'nccl_loaded')"
std::string stops_text(const ArmTally& a, const PhaseWords& w) {
  std::string parts;
  for (const auto& [what, count] : a.stopped) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", count, what);
  std::string text = fmt::format("{} of {} trials stopped {} ({})", a.before_teardown, a.ended(), w.began, parts);
  for (const auto& reason : a.stop_reasons) text += "; the workload said: " + reason;
  return text;
}

// What became of an arm none of whose trials reached the phase.
std::string arm_stops(const ArmTally& a, const PhaseWords& w) {
  if (a.before_teardown > 0) return stops_text(a, w);
  if (a.infra > 0) return "no trial could run: " + a.first_infra_error;
  return "no trial ran";
}

Decision inconclusive(Decision d, std::string reason) {
  d.verdict = Verdict::Inconclusive;
  d.reason = std::move(reason);
  return d;
}

}  // namespace

std::string to_string(Role role) {
  switch (role) {
    case Role::Candidate:
      return "candidate";
    case Role::Vulnerable:
      return "vulnerable";
    case Role::Fixed:
      return "fixed";
  }
  return "?";
}

std::string to_string(StaticFix fix) {
  switch (fix) {
    case StaticFix::Present:
      return "present";
    case StaticFix::Absent:
      return "absent";
    case StaticFix::Unknown:
      return "unknown";
  }
  return "?";
}

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::Vulnerable:
      return "vulnerable";
    case Verdict::Fixed:
      return "fixed";
    case Verdict::NotAffected:
      return "not affected";
    case Verdict::NotVulnerable:
      return "not vulnerable";
    case Verdict::Inconclusive:
      return "inconclusive";
  }
  return "?";
}

int exit_code_of(Verdict verdict) {
  switch (verdict) {
    case Verdict::Vulnerable:
      return 1;
    case Verdict::Inconclusive:
      return 3;
    default:
      return 0;
  }
}

StaticReading static_reading_of(const nccl::InspectResult& inspected) {
  StaticReading r;
  r.version = inspected.version;
  r.imports_shutdown = inspected.imports_shutdown;
  r.fix = inspected.fix == nccl::FixVerdict::Yes  ? StaticFix::Present
          : inspected.fix == nccl::FixVerdict::No ? StaticFix::Absent
                                                  : StaticFix::Unknown;
  r.notes = inspected.reasons;
  // Read from the fatbin: a library with no code for this GPU cannot initialise here.
  if (inspected.runs_on_sm90.runs == nccl::RunsOn::No) r.gpu_code_problem = inspected.runs_on_sm90.reason;
  return r;
}

std::string references_not_run(const ArmTally& vulnerable, const ArmTally& fixed, const PhaseWords& w) {
  std::string parts;
  for (const auto& [name, arm] : {std::pair{"vulnerable", &vulnerable}, std::pair{"fixed", &fixed}}) {
    if (arm->counted() > 0) continue;
    parts += fmt::format("{}the {} reference: {}", parts.empty() ? "" : "; ", name, arm_stops(*arm, w));
  }
  if (parts.empty()) return "";
  return fmt::format("no trial of a reference got far enough to hang {}, so nothing can be judged on this machine ({})",
                     w.in, parts);
}

bool is_teardown_phase(const std::string& phase) { return phase.empty() || phase.rfind("teardown", 0) == 0; }

PhaseWords phase_words(const std::string& phase) {
  if (is_teardown_phase(phase)) return {};
  const std::string quoted = "`" + phase + "`";
  return {"after " + quoted, "before " + quoted, "before " + quoted, "after " + quoted};
}

Decision decide(const ArmTally& cand, const ArmTally& vuln, const ArmTally& fixed, const StaticReading& reading,
                double alpha, const PhaseWords& w) {
  Decision d;
  d.words = w;
  d.vs_vulnerable = stats::fisher_exact(cand.tally(), vuln.tally());
  d.vs_fixed = stats::fisher_exact(cand.tally(), fixed.tally());
  d.references = stats::fisher_exact(vuln.tally(), fixed.tally());
  d.references_separate =
      d.references.p_two_sided < alpha && vuln.teardown_hangs * fixed.counted() > fixed.teardown_hangs * vuln.counted();

  if (cand.before_teardown > 0) {
    std::string reason = stops_text(cand, w) + fmt::format(": a trial that stops {} says nothing about it", w.before);
    if (!reading.gpu_code_problem.empty()) reason += "; did not initialise on this GPU: " + reading.gpu_code_problem;
    return inconclusive(d, reason);
  }
  if (cand.counted() == 0) {
    return inconclusive(d, cand.infra > 0 ? "no trial of the library could run: " + cand.first_infra_error
                                          : "no trial of the library ran");
  }
  if (cand.teardown_failures > 0) {
    return inconclusive(d, fmt::format("{} of {} trials crashed or failed {} instead of ending or hanging there; see "
                                       "the run's report",
                                       cand.teardown_failures, cand.counted(), w.during));
  }
  if (std::string not_run = references_not_run(vuln, fixed, w); !not_run.empty()) {
    d.references_reached_phase = false;
    return inconclusive(d, not_run);
  }
  if (!d.references_separate) {
    std::string reason = fmt::format(
        "the references do not separate (vulnerable {} against fixed {}, p = {}): this "
        "machine does not reproduce the hang, so nothing can be concluded",
        rate(vuln), rate(fixed), stats::format_p(d.references));
    if (vuln.before_teardown > 0) reason += "; vulnerable reference: " + stops_text(vuln, w);
    if (fixed.before_teardown > 0) reason += "; fixed reference: " + stops_text(fixed, w);
    return inconclusive(d, reason);
  }
  const bool like_vulnerable = d.vs_fixed.p_two_sided < alpha && d.vs_vulnerable.p_two_sided >= alpha;
  const bool like_fixed = d.vs_vulnerable.p_two_sided < alpha && d.vs_fixed.p_two_sided >= alpha;
  if (like_vulnerable) {
    d.verdict = Verdict::Vulnerable;
    d.reason = fmt::format("hangs {} {} like the vulnerable reference ({}), unlike the fixed one ({})", w.in,
                           rate(cand), rate(vuln), rate(fixed));
    if (!reading.applies) return d;
    if (reading.fix == StaticFix::Present) {
      d.disagreement =
          "the static reading says ncclSocketClose calls shutdown(), yet the teardown hangs: another "
          "mechanism than the close-only socket, or a build the reading misjudges; read the hang's "
          "evidence";
    } else if (reading.fix == StaticFix::Unknown) {
      d.disagreement = "the static reading could not tell whether ncclSocketClose calls shutdown() (no symbol)";
    }
    return d;
  }
  if (like_fixed) {
    const std::string trials = fmt::format(
        "does not hang {} ({}) like the fixed reference ({}), unlike "
        "the vulnerable one ({})",
        w.in, rate(cand), rate(fixed), rate(vuln));
    if (!reading.applies) {
      d.verdict = Verdict::Fixed;
      d.reason = trials;
      return d;
    }
    switch (reading.fix) {
      case StaticFix::Present:
        d.verdict = Verdict::Fixed;
        d.reason = trials + ", and its ncclSocketClose calls shutdown()";
        break;
      case StaticFix::Absent:
        d.verdict = Verdict::NotAffected;
        d.reason = trials +
                   ", though its ncclSocketClose never calls shutdown(): its teardown does not wait for its "
                   "peers' sockets this way";
        break;
      case StaticFix::Unknown:
        d.verdict = Verdict::NotVulnerable;
        d.reason = trials;
        d.disagreement =
            "whether ncclSocketClose calls shutdown() could not be read (no symbol, e.g. a stripped "
            "library), so the library is neither called fixed nor not affected";
        break;
    }
    return d;
  }
  if (d.vs_vulnerable.p_two_sided < alpha && d.vs_fixed.p_two_sided < alpha) {
    return inconclusive(d, fmt::format("hangs {} {}: unlike both references at alpha {} (vulnerable {}, "
                                       "fixed {}); a partial hang rate, read the hangs' evidence",
                                       w.in, rate(cand), alpha, rate(vuln), rate(fixed)));
  }
  return inconclusive(d, fmt::format("hangs {} {}: not separated from either reference at alpha {} "
                                     "(vulnerable {}, fixed {}); more trials (--trials) may decide",
                                     w.in, rate(cand), alpha, rate(vuln), rate(fixed)));
}

}  // namespace hangbench::validate
