#include "peer_death_options.hpp"

#include <map>

#include "cli.hpp"
#include "two_rank_options.hpp"

namespace hangbench::nccl_peer_death {

std::optional<Options> parse_options(const std::vector<std::string>& args, int* exit_code) {
  Options o;
  workload::Cli cli(
      "nccl_peer_death",
      "nccl_peer_death: a peer dies in the middle of a job. Two NCCL ranks on one GPU (each its own "
      "NCCL host: NET/Socket and the proxy's progress thread); after checked all-reduces rank 1 is "
      "killed, rank 0 posts one more all-reduce and waits for NCCL to report the death through "
      "ncclCommGetAsyncError, then aborts its communicator (or leaves). 2.26.2 to 2.28.2 drop the "
      "failed network operation without reporting it (no error: a hang after `peer_dead`); 2.23.4 "
      "to 2.25.1 report it but their progress thread never sees the abort (a hang after "
      "`abort_begin`). With --comms=2 each rank holds two communicators with an all-reduce pending on "
      "both when rank 1 dies: aborting them one by one waits in the first abort's device-synchronising "
      "free for the second communicator's kernel, which spins on the dead peer; a grouped abort "
      "(2.22.3 on) ends both. With --peer-death=idle rank 1 never dies and never posts: rank 0's abort must "
      "stop a kernel that waits for a live peer (NVIDIA/nccl issue 829). Speaks hangbench's phase protocol.");
  CLI::App& app = cli.app();
  const std::map<std::string, AfterError> after = {{"abort", AfterError::Abort}, {"exit", AfterError::Exit}};
  const std::map<std::string, AbortOrder> orders = {{"each", AbortOrder::Each}, {"grouped", AbortOrder::Grouped}};
  const std::map<std::string, PeerDeath> deaths = {
      {"self", PeerDeath::Self}, {"killed-after-post", PeerDeath::KilledAfterPost}, {"idle", PeerDeath::Idle}};
  const std::map<std::string, AbortFrom> abort_threads = {{"main", AbortFrom::Main}, {"thread", AbortFrom::Thread}};
  workload::add_two_rank_options(app, o);
  app.add_option("--warmups", o.warmups, "checked all-reduces before rank 1 dies")->check(CLI::Range(1, 1000));
  app.add_option("--count", o.count, "floats per all-reduce")->check(CLI::Range(1, 1 << 28));
  app.add_option("--error-wait", o.error_wait_s,
                 "seconds rank 0 waits for the error before aborting anyway, as a job's watchdog would (0: for ever)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--after-error", o.after_error, "abort: ncclCommAbort then exit; exit: leave without aborting")
      ->transform(CLI::CheckedTransformer(after, CLI::ignore_case));
  app.add_option("--comms", o.comms, "communicators between the ranks, each with an all-reduce pending (1 or 2)")
      ->check(CLI::Range(1, 2));
  app.add_option("--abort-order", o.abort_order,
                 "each: ncclCommAbort on one communicator after the other; grouped: all of them between "
                 "ncclGroupStart and ncclGroupEnd")
      ->transform(CLI::CheckedTransformer(orders, CLI::ignore_case));
  app.add_option("--peer-death", o.peer_death,
                 "self: rank 1 kills itself after the warm-up; killed-after-post: rank 0 kills it once its last "
                 "all-reduces are posted; idle: rank 1 stays alive and never posts (rank 0 aborts after --error-wait)")
      ->transform(CLI::CheckedTransformer(deaths, CLI::ignore_case));
  app.add_option("--abort-from", o.abort_from,
                 "main: the main thread waits for the error and aborts; thread: a second thread does, while the "
                 "main thread stays in CUDA calls (it waits for the pending all-reduces, then copies until the abort "
                 "ends)")
      ->transform(CLI::CheckedTransformer(abort_threads, CLI::ignore_case));
  app.add_option("--second-unique-id", o.second_unique_id_hex, "(internal) the second communicator's, with --comms=2");
  const workload::CliResult parsed = cli.parse(args, [&] {
    workload::check_two_rank_options(o);
    if (o.rank > 0 && o.comms == 2 && o.second_unique_id_hex.size() != 256)
      throw workload::UsageError("--rank 1 with --comms=2 needs --second-unique-id (256 hex digits)");
    if (o.rank == 0 && o.peer_death == PeerDeath::Idle && o.error_wait_s <= 0)
      throw workload::UsageError("--peer-death=idle needs --error-wait > 0 (no error comes while the peer lives)");
    if (o.abort_from == AbortFrom::Thread && o.after_error == AfterError::Exit)
      throw workload::UsageError("--abort-from=thread needs --after-error=abort (with exit no thread aborts)");
    if (o.comms == 1 && o.abort_order == AbortOrder::Grouped)
      throw workload::UsageError("--abort-order=grouped needs --comms=2 (one communicator has no order)");
  });
  if (!parsed.run) {
    workload::print(parsed);
    *exit_code = parsed.exit_code;
    return std::nullopt;
  }
  return o;
}

}  // namespace hangbench::nccl_peer_death
