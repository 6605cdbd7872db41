// Which transport NCCL chose between ranks, read from its own INFO log: the
// "Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0" lines. A trial records it so
// that a result says how its ranks talked (NET/Socket on a shared GPU, P2P or
// NVLink with one GPU per rank).
#pragma once

#include <istream>
#include <set>
#include <string>

namespace hangbench::workload {

// When NCCL_DEBUG is set and NCCL_DEBUG_FILE is not, sends NCCL's log to
// <trial_dir>/nccl-debug.rank<R>.log (kept beside the trial's evidence) instead of
// stderr. Call before the first NCCL call. Returns the file, or "" when NCCL logs
// elsewhere or not at all.
std::string route_nccl_debug_log(const std::string& trial_dir, int world_rank);

// The distinct "via X" transports in an NCCL log, e.g. {"NET/Socket/0",
// "NET/Socket/0/Shared"}; empty when the log names none.
std::set<std::string> nccl_transports(std::istream& log);
std::set<std::string> nccl_transports_in_file(const std::string& path);

// "NET/Socket/0 NET/Socket/0/Shared", or "unknown" when empty.
std::string join_transports(const std::set<std::string>& transports);

}  // namespace hangbench::workload
