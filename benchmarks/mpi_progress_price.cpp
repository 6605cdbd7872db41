// The price of the native MPI progress thread, in one run, side by side:
//  1. CPU time of the progress thread per rank (% of one core) at intervals of
//     1 ms, 5 ms, 20 ms and 1 s, read from the thread's own CPU clock
//     (pthread_getcpuclockid) over a fixed wall window;
//  2. how long a rendezvous send takes to reach its receiver while the sender's
//     executor is blocked outside MPI, with each interval, against the sender
//     sitting in MPI_Wait (the floor) and against no progress source (the send
//     completes only when the executor unblocks).
// Prints a Markdown table on rank 0. Both ranks must share one host (latency
// uses CLOCK_MONOTONIC across the two processes).
//
//   OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo
//   mpirun -np 2 mpi_progress_price [--window=S] [--reps=N] [--bytes=N]
#include <mpi.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mpi_progress_thread.hpp"

namespace mp = hangbench::mpi_progress;
using namespace std::chrono_literals;

namespace {

struct Options {
  double window_s = 5.0;  // wall window per CPU measurement
  int reps = 7;           // rendezvous sends per latency row
  int bytes = 4 << 20;    // well above btl_tcp_eager_limit
  double block_s = 1.5;   // how long the sender's executor stays away from MPI
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* key) { return a.rfind(key, 0) == 0 ? a.c_str() + std::strlen(key) : nullptr; };
    if (const char* v = value("--window="))
      o.window_s = std::atof(v);
    else if (const char* v = value("--reps="))
      o.reps = std::atoi(v);
    else if (const char* v = value("--bytes="))
      o.bytes = std::atoi(v);
    else if (const char* v = value("--block="))
      o.block_s = std::atof(v);
    else {
      std::fprintf(stderr, "usage: mpi_progress_price [--window=S] [--reps=N] [--bytes=N] [--block=S]\n");
      std::exit(2);
    }
  }
  if (o.window_s <= 0 || o.reps <= 0 || o.bytes <= 0 || o.block_s <= 0) {
    std::fprintf(stderr, "mpi_progress_price: every option must be positive\n");
    std::exit(2);
  }
  return o;
}

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double thread_cpu_s(pthread_t thread) {
  clockid_t clock;
  if (pthread_getcpuclockid(thread, &clock) != 0) return -1;
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct CpuSample {
  double percent_of_core = 0;
  double probes_per_s = 0;
};

// Runs the thread for the window with nothing else to do; both ranks at once.
CpuSample measure_cpu(std::chrono::microseconds interval, double window_s) {
  MPI_Barrier(MPI_COMM_WORLD);
  mp::MpiProgressThread thread(MPI_COMM_WORLD, interval);
  const pthread_t handle = thread.native_handle();
  const double wall0 = monotonic_s(), cpu0 = thread_cpu_s(handle);
  const auto probes0 = thread.probe_count();
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
  const double cpu1 = thread_cpu_s(handle), wall1 = monotonic_s();
  const auto probes1 = thread.probe_count();
  thread.stop();
  return {100.0 * (cpu1 - cpu0) / (wall1 - wall0), static_cast<double>(probes1 - probes0) / (wall1 - wall0)};
}

// One rendezvous send; returns (on rank 0) seconds from Isend to the receive's completion.
double one_send(std::vector<char>& buffer, bool sender_waits_in_mpi, double block_s) {
  MPI_Barrier(MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double received_at = 0;
  if (rank == 0) {
    MPI_Request request;
    const double posted_at = monotonic_s();
    MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_CHAR, 1, 1, MPI_COMM_WORLD, &request);
    if (!sender_waits_in_mpi) {
      std::this_thread::sleep_for(std::chrono::duration<double>(block_s));  // executor away from MPI
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Recv(&received_at, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return received_at - posted_at;
  }
  MPI_Recv(buffer.data(), static_cast<int>(buffer.size()), MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  received_at = monotonic_s();
  MPI_Send(&received_at, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
  return 0;
}

struct Latency {
  double median_ms = 0;
  double max_ms = 0;
};

Latency measure_latency(std::chrono::microseconds interval, bool sender_waits_in_mpi, const Options& o) {
  std::vector<char> buffer(static_cast<std::size_t>(o.bytes), 'x');
  std::unique_ptr<mp::MpiProgressThread> thread;
  if (interval.count() > 0) thread = std::make_unique<mp::MpiProgressThread>(MPI_COMM_WORLD, interval);
  std::vector<double> samples;
  for (int i = 0; i < o.reps; ++i) samples.push_back(one_send(buffer, sender_waits_in_mpi, o.block_s) * 1e3);
  if (thread) thread->stop();
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2], samples.back()};
}

std::string label(std::chrono::microseconds interval) {
  if (interval.count() >= 1000000) return std::to_string(interval.count() / 1000000) + " s";
  return std::to_string(interval.count() / 1000) + " ms";
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world != 2 || provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::fprintf(stderr, "mpi_progress_price: needs 2 ranks and MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 2;
  }
  const std::vector<std::chrono::microseconds> intervals{1000us, 5000us, 20000us, 1000000us};

  if (rank == 0) {
    const char* pml = std::getenv("OMPI_MCA_pml");
    const char* btl = std::getenv("OMPI_MCA_btl");
    std::printf(
        "mpi_progress_price: %d bytes per send, CPU window %.1f s, %d sends per row, "
        "executor away from MPI %.1f s per send; OMPI_MCA_pml=%s OMPI_MCA_btl=%s\n\n",
        o.bytes, o.window_s, o.reps, o.block_s, pml ? pml : "(unset)", btl ? btl : "(unset)");
    std::printf(
        "| progress source | CPU, rank 0 (%% of one core) | CPU, rank 1 | probes/s | "
        "send reaches receiver, median (ms) | max (ms) |\n");
    std::printf("| --- | --- | --- | --- | --- | --- |\n");
  }
  auto row = [&](const std::string& name, const CpuSample* cpu, const Latency& lat) {
    double mine[2] = {cpu ? cpu->percent_of_core : 0, cpu ? cpu->probes_per_s : 0};
    double all[4] = {0, 0, 0, 0};
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    if (cpu) {
      std::printf("| native, %s | %.3f | %.3f | %.0f | %.1f | %.1f |\n", name.c_str(), all[0], all[2], all[1],
                  lat.median_ms, lat.max_ms);
    } else {
      std::printf("| %s | - | - | - | %.1f | %.1f |\n", name.c_str(), lat.median_ms, lat.max_ms);
    }
    std::fflush(stdout);
  };

  {
    // Warm-up: the first send between two ranks also opens the TCP connection.
    std::vector<char> buffer(static_cast<std::size_t>(o.bytes), 'x');
    one_send(buffer, true, 0);
  }
  row("sender in MPI_Wait (floor)", nullptr, measure_latency(0us, true, o));
  for (const auto interval : intervals) {
    const CpuSample cpu = measure_cpu(interval, o.window_s);
    row(label(interval), &cpu, measure_latency(interval, false, o));
  }
  row("none (completes when the executor returns)", nullptr, measure_latency(0us, false, o));

  MPI_Finalize();
  return 0;
}
