// The two clocks the harness reads, and the host's name: one definition each.
#pragma once

#include <string>

namespace hangbench {

double monotonic_seconds();   // CLOCK_MONOTONIC, in seconds
std::string utc_timestamp();  // now, as 2026-12-04T10:30:00Z
std::string host_name();      // gethostname(), "" when it fails

}  // namespace hangbench
