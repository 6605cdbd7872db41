// The atexit fallback for real: start a lifecycle, then leave through exit()
// without stopping it. The lifecycle's handler (registered after ours, so it
// runs first) must stop the thread; our handler then checks that, finalises
// MPI and turns the check into the exit status. Run: mpirun -np 1.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "progress_lifecycle.hpp"

namespace mp = hangbench::mpi_progress;

namespace {
mp::ProgressLifecycle* g_lifecycle = nullptr;  // what the exit-time check inspects

extern "C" void check_then_finalize() {
  const bool stopped = !g_lifecycle->is_running();
  const bool by_fallback = g_lifecycle->stopped_by() == mp::StopPath::AtexitFallback;
  std::printf("atexit fallback: running=%d stopped_by=%s probes=%llu\n", stopped ? 0 : 1,
              mp::to_string(g_lifecycle->stopped_by()).c_str(),
              static_cast<unsigned long long>(g_lifecycle->probe_count()));
  std::fflush(stdout);
  MPI_Finalize();
  _exit(stopped && by_fallback ? 0 : 1);
}
}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  std::atexit(check_then_finalize);
  mp::StartConditions conditions;
  conditions.pipeline_stages = 2;  // the decision only; one process suffices
  conditions.mpi_enabled = true;
  conditions.interval = mp::parse_progress_interval("1000");
  conditions.provided_thread_level = provided;
  // Leaked on purpose: exit() does not run destructors of this frame anyway.
  g_lifecycle = new mp::ProgressLifecycle(conditions, MPI_COMM_WORLD, std::cerr);
  if (!g_lifecycle->started()) return 1;
  // Until the thread has probed; the bound only turns a hang into a failure
  // (_exit: the check at exit would otherwise still report the fallback's stop).
  for (int waited_ms = 0; g_lifecycle->probe_count() < 3; ++waited_ms) {
    if (waited_ms == 30000) {
      std::fprintf(stderr, "atexit fallback: no probes within 30 s\n");
      _exit(2);
    }
    usleep(1000);
  }
  std::exit(0);  // no stop_for_shutdown(), no MPI_Finalize(): the fallback's job
}
