#include "workload_options.hpp"

#include <cstdlib>
#include <map>

#include "cli.hpp"
#include "workload_exit_codes.hpp"

namespace hangbench::mpi_progress {

std::string to_string(ProgressMode m) {
  switch (m) {
    case ProgressMode::None:
      return "none";
    case ProgressMode::Pump:
      return "pump";
    case ProgressMode::Native:
      return "native";
  }
  return "unknown";
}

std::optional<WorkloadOptions> parse_workload_options(int argc, char** argv) {
  WorkloadOptions o;
  workload::Cli cli("mpi_progress",
                    "mpi_progress: rank 0 posts a rendezvous-size MPI_Isend, then its executor "
                    "thread holds the Python GIL in a native call that returns only after rank 1 "
                    "has received the message. Run with mpirun -np 2.");
  CLI::App& app = cli.app();
  const std::map<std::string, ProgressMode> modes{
      {"none", ProgressMode::None}, {"pump", ProgressMode::Pump}, {"native", ProgressMode::Native}};
  app.add_option("--progress", o.progress, "progress source: none | pump (Python thread, needs the GIL) | native")
      ->transform(CLI::CheckedTransformer(modes, CLI::ignore_case));
  app.add_option("--bytes", o.message_bytes, "size of the message rank 0 sends (must exceed the rendezvous threshold)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
  app.add_option(
      "--interval-us", o.interval_us,
      "probe interval in microseconds for pump and native (default: $HANGBENCH_MPI_PROGRESS_INTERVAL_US, else 5000)");
  app.add_option("--watchdog", o.watchdog_s, "seconds before rank 0 takes the hang-detected path (0: never)")
      ->check(CLI::NonNegativeNumber);
  const workload::CliResult parsed = cli.parse(workload::arguments(argc, argv));
  if (!parsed.run) {
    workload::print(parsed);
    if (parsed.exit_code == workload_exit::kHealthy) std::exit(workload_exit::kHealthy);  // --help
    return std::nullopt;
  }
  return o;
}

}  // namespace hangbench::mpi_progress
