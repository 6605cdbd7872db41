// A finding's severity in words, and back (findings read from JSON).
#include <stdexcept>

#include "hangbench/findings.hpp"

namespace hangbench::diagnose {

std::string to_string(Severity s) {
  switch (s) {
    case Severity::Hang:
      return "hang";
    case Severity::Risk:
      return "risk";
    case Severity::Note:
      return "note";
    case Severity::Plumbing:
      return "plumbing";
  }
  return "note";
}

Severity severity_from_string(const std::string& text) {
  for (Severity s : {Severity::Hang, Severity::Risk, Severity::Note, Severity::Plumbing})
    if (to_string(s) == text) return s;
  throw std::invalid_argument("not a finding's severity: '" + text + "' (hang, risk, note, plumbing)");
}

}  // namespace hangbench::diagnose
