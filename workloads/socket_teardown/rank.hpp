// One rank's life: connect to its proxy service, maybe fork a helper, then tear
// down the way ncclCommAbort/ncclCommDestroy does, waiting for the service to
// exit (commFree's join) while sampling the kernel's view of the connection.
#pragma once

#include "options.hpp"

namespace socket_teardown {

// Returns the process exit code: 0 when the teardown completed, 4 (workload_exit::kRunError) on a runtime error.
int run_rank(const RankOptions& options);

}  // namespace socket_teardown
