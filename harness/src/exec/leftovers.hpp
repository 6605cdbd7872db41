// What a dead harness may have left behind, ended at the start of `run` and
// `run --resume` (with the output folder's lock held, so nothing of it is live):
// stale hangbench cgroups whose owner is gone, and processes of trials of this
// folder (their environment names a trial folder under it) that outlived their
// harness and its watcher.
#pragma once

#include <string>
#include <vector>

namespace hangbench::exec_detail {

// One line per thing ended or removed, for the terminal; empty when nothing was left.
std::vector<std::string> end_leftovers(const std::string& cgroup_root, const std::string& out_dir);

}  // namespace hangbench::exec_detail
