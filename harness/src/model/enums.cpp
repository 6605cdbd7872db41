#include "hangbench/model.hpp"

namespace hangbench {

std::string to_string(Outcome o) {
  switch (o) {
    case Outcome::Passed:
      return "PASSED";
    case Outcome::Hang:
      return "HANG";
    case Outcome::Crashed:
      return "CRASHED";
    case Outcome::Failed:
      return "FAILED";
    case Outcome::Infra:
      return "INFRA";
  }
  return "INFRA";
}

std::optional<Outcome> outcome_from_string(const std::string& s) {
  for (Outcome o : {Outcome::Passed, Outcome::Hang, Outcome::Crashed, Outcome::Failed, Outcome::Infra}) {
    if (to_string(o) == s) return o;
  }
  return std::nullopt;
}

std::string to_string(CleanupStep s) {
  switch (s) {
    case CleanupStep::None:
      return "none";
    case CleanupStep::Term:
      return "SIGTERM";
    case CleanupStep::Kill:
      return "SIGKILL";
  }
  return "none";
}

std::optional<CleanupStep> cleanup_step_from_string(const std::string& s) {
  for (CleanupStep step : {CleanupStep::None, CleanupStep::Term, CleanupStep::Kill}) {
    if (to_string(step) == s) return step;
  }
  return std::nullopt;
}

std::string to_string(Expectation e) {
  switch (e) {
    case Expectation::None:
      return "";
    case Expectation::Hang:
      return "hang";
    case Expectation::NoHang:
      return "no-hang";
  }
  return "";
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::None:
      return "";
    case Verdict::Confirmed:
      return "CONFIRMED";
    case Verdict::Contradicted:
      return "CONTRADICTED";
    case Verdict::Inconclusive:
      return "INCONCLUSIVE";
  }
  return "";
}

}  // namespace hangbench
