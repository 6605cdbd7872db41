// The monotonic clock the harness reads, and the host's name: one definition each
// (the UTC timestamp is utc_now_iso8601(), hangbench/provenance.hpp).
#pragma once

#include <string>

namespace hangbench {

double monotonic_seconds();  // CLOCK_MONOTONIC, in seconds
std::string host_name();     // gethostname(), "" when it fails

}  // namespace hangbench
