// diagnose --stacks on a hung Python process and its forked child, beside
// `py-spy dump` on the same process (the bar: within 10x of it).
//   build/benchmarks/diagnose_stacks [--benchmark_repetitions=5]
// Needs python3 on PATH; the py-spy rows need py-spy (ci/setup.sh installs it).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "hangbench/diagnose.hpp"
#include "hangbench/native_stacks.hpp"
#include "hangbench/paths.hpp"
#include "hangbench/proc.hpp"
#include "hangbench/python_stacks.hpp"

extern char** environ;

namespace {

struct Hung {
  int pid = 0, child = 0;
  Hung() {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      std::string script = hangbench::source_root() + "/tests/integration/python/hung_with_child.py";
      ::execlp("python3", "python3", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    char c;
    while (::read(fds[0], &c, 1) == 1 && c != '\n') line += c;  // ready once it prints
    ::close(fds[0]);
    auto at = line.find("\"child\": ");
    child = at == std::string::npos ? 0 : std::atoi(line.c_str() + at + 9);
  }
  ~Hung() {
    ::kill(child, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

Hung& hung() {
  static Hung h;
  return h;
}

void BM_DiagnoseTreeStacks(benchmark::State& state) {
  hangbench::diagnose::DiagnoseRequest request;
  request.tree_root = hung().pid;
  request.stacks = true;
  for (auto _ : state) {
    auto d = hangbench::diagnose::diagnose(request);
    if (d.snapshot.processes.size() < 2) state.SkipWithError("the hung tree was not read");
  }
}
BENCHMARK(BM_DiagnoseTreeStacks)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LibdwStacksOneProcess(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(hangbench::diagnose::libdw_stacks(hung().pid, 20));
}
BENCHMARK(BM_LibdwStacksOneProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PythonFramesOneProcess(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(hangbench::diagnose::read_python_stacks(hung().pid));
}
BENCHMARK(BM_PythonFramesOneProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

// `py-spy dump --pid PID [--native]`, one process: what an on-call engineer runs first.
void py_spy(benchmark::State& state, bool native) {
  if (std::system("command -v py-spy >/dev/null 2>&1") != 0) {
    state.SkipWithError("py-spy is not on PATH");
    return;
  }
  std::string pid = std::to_string(hung().pid);
  std::vector<std::string> args = {"py-spy", "dump", "--pid", pid};
  if (native) args.push_back("--native");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  for (auto _ : state) {
    pid_t child = 0;
    if (posix_spawnp(&child, "py-spy", &quiet, nullptr, argv.data(), environ) != 0) state.SkipWithError("spawn failed");
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) state.SkipWithError("py-spy failed");
  }
  posix_spawn_file_actions_destroy(&quiet);
}
void BM_PySpyDump(benchmark::State& state) { py_spy(state, false); }
void BM_PySpyDumpNative(benchmark::State& state) { py_spy(state, true); }
BENCHMARK(BM_PySpyDump)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PySpyDumpNative)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
