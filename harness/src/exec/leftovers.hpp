// What a dead harness may have left behind, ended at the start of `run` and
// `run --resume` (with the output folder's lock held, so nothing of it is live):
// stale hangbench cgroups whose owner is gone, and processes of trials of this
// folder's own recorded runs that outlived their harness and its watcher. A trial
// is one of them only when its HANGBENCH_TRIAL_DIR is exactly
// <out_dir>/trials/<run id>/<cell folder>/<index> for a run id the folder's store
// records: a live run whose --out lies inside this folder (say <out_dir>/trials/x)
// is someone else's, and is left alone (issue 41, item 4).
#pragma once

#include <string>
#include <vector>

namespace hangbench::exec_detail {

// One line per thing ended or removed, for the terminal; empty when nothing was left.
// `run_ids` are the runs the folder's store records.
std::vector<std::string> end_leftovers(const std::string& cgroup_root, const std::string& out_dir,
                                       const std::vector<std::string>& run_ids);

// Whether `trial_dir` (a HANGBENCH_TRIAL_DIR) is a trial folder of one of `run_ids`
// in `out_dir`: <out_dir>/trials/<sanitized run id>/<one name>/<digits>.
bool is_trial_dir_of(const std::string& trial_dir, const std::string& out_dir, const std::vector<std::string>& run_ids);

}  // namespace hangbench::exec_detail
