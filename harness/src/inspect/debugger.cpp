// Native stacks through gdb or cuda-gdb in batch mode, under a hard time bound.
// Attaching pauses the target for as long as the debugger runs; this runs only
// when the user asked for stacks.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "hangbench/paths.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

namespace {

struct ChildOutput {
  std::string text;
  bool timed_out = false;
  bool started = false;
};

// Runs argv with stdout+stderr captured; kills its whole process group at the deadline.
ChildOutput run_bounded(const std::vector<std::string>& argv, double timeout_s) {
  ChildOutput out;
  // Built before fork(): the child of a threaded process should only make system calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return out;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return out;
  }
  if (child == 0) {
    ::setpgid(0, 0);
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  out.started = true;
  ::setpgid(child, child);
  ::close(pipefd[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[8192];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    out.text.append(buf, static_cast<std::size_t>(n));
  }
  if (out.timed_out) ::kill(-child, SIGKILL);
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

// "std::vector<int, std::allocator<int> >::push_back (this=...) at f.cc:3" -> up to the arguments.
std::string function_name(const std::string& rest) {
  auto args = rest.find(" (");
  std::string name = rest.substr(0, args);
  for (const char* tail : {" from ", " at "})
    if (auto at = name.find(tail); at != std::string::npos) name.erase(at);
  return name;
}

}  // namespace

std::vector<StackThread> parse_gdb_backtraces(const std::string& text) {
  // Thread 2 (Thread 0x7f.. (LWP 1235) "NCCL Service 0"):
  // #0  0x00007f.. in poll () from /lib/x86_64-linux-gnu/libc.so.6
  // #1  0x00007f.. in ncclProxyService (_args=0x..) at proxy.cc:1437
  // #2  commFree (comm=0x..) at init.cc:180        (inlined frames carry no address)
  static const std::regex thread_re(R"(^Thread \d+ \(.*LWP (\d+)\)(?: \"([^\"]*)\")?\):?)");
  static const std::regex frame_re(R"(^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(.+))");
  std::vector<StackThread> threads;
  std::istringstream in(text);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, thread_re)) {
      StackThread t;
      t.tid = std::atoi(m[1].str().c_str());
      t.name = m[2].str();
      threads.push_back(std::move(t));
    } else if (!threads.empty() && std::regex_search(line, m, frame_re)) {
      threads.back().functions.push_back(function_name(m[1].str()));
    }
  }
  if (threads.empty()) {  // single-threaded programs print frames without a Thread header
    StackThread t;
    std::istringstream again(text);
    for (std::string line; std::getline(again, line);)
      if (std::regex_search(line, m, frame_re)) t.functions.push_back(function_name(m[1].str()));
    if (!t.functions.empty()) threads.push_back(std::move(t));
  }
  return threads;
}

std::vector<std::string> debugger_command(const std::string& debugger, int pid,
                                          const std::vector<std::string>& symbols) {
  std::vector<std::string> argv = {debugger, "-nx", "-batch"};
  if (!symbols.empty()) argv.insert(argv.end(), {"-iex", "set auto-solib-add off"});
  argv.insert(argv.end(), {"-p", std::to_string(pid), "-ex", "set pagination off"});
  for (const auto& library : symbols) argv.insert(argv.end(), {"-ex", "sharedlibrary " + library});
  argv.insert(argv.end(), {"-ex", "thread apply all bt"});
  return argv;
}

DebuggerStacks capture_stacks(int pid, const SnapshotOptions& opts, char state_before) {
  DebuggerStacks st;
  st.attempted = true;
  std::string debugger;
  if (!opts.debugger.program.empty())
    debugger = find_executable(opts.debugger.program);
  else
    for (const char* name : {"gdb", "cuda-gdb"})
      if ((debugger = find_executable(name)) != "") break;
  if (debugger.empty()) {
    st.skipped_reason = opts.debugger.program.empty() ? "no debugger found (neither gdb nor cuda-gdb is on PATH)"
                                                      : "debugger '" + opts.debugger.program + "' not found";
    return st;
  }
  st.debugger = debugger;
  auto out = run_bounded(debugger_command(debugger, pid, opts.debugger.symbols), opts.debugger.timeout_s);
  st.raw = out.text;
  st.timed_out = out.timed_out;
  // A debugger killed mid-attach can leave the target stopped; resume it unless it was stopped before.
  if (out.timed_out && state_before != 'T' && state_before != 't') ::kill(pid, SIGCONT);
  if (!out.started) {
    st.skipped_reason = "the debugger could not be started";
  } else if (out.timed_out) {
    st.skipped_reason =
        "the debugger did not finish within " + std::to_string(opts.debugger.timeout_s) + " s and was killed";
  } else if (out.text.find("ptrace: Operation not permitted") != std::string::npos ||
             out.text.find("Could not attach to process") != std::string::npos) {
    st.skipped_reason = "ptrace is not permitted on this process (yama ptrace_scope, container or other user)";
  }
  st.threads = parse_gdb_backtraces(out.text);
  if (st.threads.empty() && st.skipped_reason.empty()) st.skipped_reason = "the debugger printed no stack";
  return st;
}

}  // namespace hangbench::diagnose
