// What to do about a known hang shape, each remedy with the measured comparison
// in results/ that backs it (remedies_test.cpp checks every row against the report).
#include "hangbench/diagnose.hpp"

namespace hangbench::evidence {

std::vector<Remedy> remedies_for(const std::string& key) {
  static const std::string ddp = "results/h200-2026-12-02-c/ddp-abort/report.md";
  static const std::string spawn = "results/h200-2026-12-02-c/ddp-spawn/report.md";
  static const std::string socket = "results/socket-teardown-2026-12-02/report.md";
  if (key == "nccl-descriptor-alias")
    return {{"upgrade NCCL to 2.18.1 or later (its ncclSocketClose calls shutdown())", ddp,
             "2.17.1 vs 2.17.1+backport, abort at exit, workers after init", "40/40", "0/40"},
            {"or fork the loader workers before init_process_group", ddp,
             "2.17.1 abort at exit: workers forked after init vs before", "40/40", "0/40"},
            {"or start them with spawn/forkserver", spawn, "2.17.1 abort at exit: workers forked after init vs spawned",
             "40/40", "0/40"}};
  if (key == "descriptor-alias-shape")
    return {{"shutdown() before close() on the closing side", socket,
             "close-only vs shutdown, helper forked after (the 2.18.1 fix)", "40/40", "0/40"},
            {"or fork the holder before the connection exists", socket,
             "close-only: helper forked after vs before the connection", "40/40", "0/40"},
            {"or close_range() the inherited descriptors in it", socket,
             "close-only: fork-only helper vs helper that close_range()s its descriptors", "40/40", "0/40"}};
  return {};
}

}  // namespace hangbench::evidence
