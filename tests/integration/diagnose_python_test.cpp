// `diagnose --stacks` on a real hung Python program (tests/integration/python/
// hung_with_child.py), once under each interpreter: the python3 on PATH (Debian 12:
// 3.11), and CPython 3.9 (bullseye's) and 3.13 (trixie's, run by its launcher under
// trixie's own loader and libc) as ci/fetch_old_pythons.sh unpacks them (HB_OLD_PYTHONS,
// else HB_OLD_PYTHONS_DIR from CMake). Native frames from libdw, the Python frames
// of the main thread, of a spinning thread (the GIL holder) and of a forked child,
// merged where the interpreter runs them; then the cases that must not hang
// diagnose: a process that is gone, a process that is not Python.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hangbench/diagnose.hpp"
#include "hangbench/native_stacks.hpp"
#include "hangbench/python_stacks.hpp"
#include "hangbench/render.hpp"
#include "hangbench/wait_graph.hpp"

using namespace hangbench::diagnose;
using ::testing::HasSubstr;

namespace {

const std::string kScript = std::string(HB_SOURCE_DIR) + "/tests/integration/python/hung_with_child.py";

// One interpreter to run the script under: `minor` 0 is the python3 on PATH.
struct Interpreter {
  int minor = 0;
  std::string version() const { return "3." + std::to_string(minor); }
  std::string unpacked() const {
    const char* dir = std::getenv("HB_OLD_PYTHONS");
    return std::string(dir && *dir ? dir : HB_OLD_PYTHONS_DIR) + "/" + version();
  }
  // Where ci/fetch_old_pythons.sh put it (its PYTHONHOME), empty for the one on PATH.
  std::string home() const { return minor == 0 ? "" : unpacked() + "/usr"; }
  // 3.13 needs a newer glibc than Debian 12's: its launcher runs it under trixie's loader.
  std::string executable() const {
    if (minor == 0) return "python3";
    return minor >= 13 ? unpacked() + "/python" + version() : home() + "/bin/python" + version();
  }
};

// How gtest (and so ctest) names a run.
void PrintTo(const Interpreter& python, std::ostream* out) {
  *out << (python.minor == 0 ? std::string("python3 on PATH") : "Python " + python.version());
}

struct HungPython {
  int pid = 0, child = 0, main_tid = 0, spin_tid = 0;
};

struct StartedScript {
  int pid = 0;
  std::string line;     // its first line of output
  nlohmann::json json;  // that line as JSON (discarded when it is not)
};

// Starts SCRIPT (with ARGS) under `python`, its stdout a pipe, and reads its first line.
StartedScript start_script(const Interpreter& python, const std::string& script, const std::vector<std::string>& args) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::string exe = python.executable(), home = python.home();
  std::vector<char*> argv = {exe.data(), const_cast<char*>(script.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    if (!home.empty()) ::setenv("PYTHONHOME", home.c_str(), 1);
    ::execvp(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  StartedScript s;
  s.pid = pid;
  char c;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') s.line += c;
  ::close(fds[0]);
  s.json = nlohmann::json::parse(s.line, nullptr, false);
  return s;
}

// Starts the script under `python` and reads its one JSON line.
HungPython start_hung_python(const Interpreter& python) {
  const StartedScript s = start_script(python, kScript, {"--spin"});
  HungPython h;
  if (s.json.is_discarded()) {
    ADD_FAILURE() << "hung_with_child.py printed: " << s.line;
    ::kill(s.pid, SIGKILL);
    return h;
  }
  h.pid = s.json["pid"];
  h.child = s.json["child"];
  h.main_tid = s.json["main_tid"];
  h.spin_tid = s.json["spin_tid"];
  return h;
}

void end(const HungPython& h) {
  for (int pid : {h.child, h.pid})
    if (pid > 0) ::kill(pid, SIGKILL);
  // The child is reparented to us (subreaper) once its parent is gone.
  for (int pid : {h.pid, h.child})
    for (int i = 0; pid > 0 && i < 5000; ++i) {
      pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      if (r == pid || (r < 0 && ::kill(pid, 0) != 0)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

// The line of the script that holds `text`.
int line_of(const std::string& text) {
  std::ifstream in(kScript);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(text) != std::string::npos) return n;
  }
  return -1;
}

const PythonThread* python_thread(const ProcessSnapshot& p, int tid) {
  for (const auto& t : p.python.threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

const StackThread* native_thread(const ProcessSnapshot& p, int tid) {
  for (const auto& t : p.stacks.threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

// Reads until the main thread sits in recv() below wait_for_peer (the script
// prints its line just before the call) and the worker in its loop, with a bound only to fail.
Diagnosis diagnose_when_waiting(const HungPython& h) {
  DiagnoseRequest request;
  request.tree_root = h.pid;
  request.stacks = true;
  Diagnosis d;
  for (int attempt = 0; attempt < 200; ++attempt) {
    d = diagnose(request);
    const ProcessSnapshot* p = d.snapshot.find(h.pid);
    const PythonThread* t = p ? python_thread(*p, h.main_tid) : nullptr;
    // The forked worker too: on a loaded machine it may not have reached its loop yet.
    const ProcessSnapshot* child = h.child > 0 ? d.snapshot.find(h.child) : nullptr;
    const bool child_ready =
        h.child <= 0 || (child && !child->python.threads.empty() && !child->python.threads[0].frames.empty() &&
                         child->python.threads[0].frames[0].function == "_worker_loop");
    if (t && !t->frames.empty() && t->frames[0].function == "wait_for_peer" && child_ready) return d;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return d;
}

class DiagnosePython : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
};

class DiagnosePythonLive : public DiagnosePython, public ::testing::WithParamInterface<Interpreter> {};

int index_of(const std::vector<StackFrame>& frames, const std::string& function, bool python) {
  for (int i = 0; i < static_cast<int>(frames.size()); ++i)
    if (frames[i].python == python && frames[i].function == function) return i;
  return -1;
}

}  // namespace

TEST_P(DiagnosePythonLive, MainThreadSpinnerAndForkedChildInPythonTerms) {
  const Interpreter& python = GetParam();
  if (python.minor != 0)
    ASSERT_TRUE(std::filesystem::exists(python.executable()))
        << "no Python " << python.version() << " at " << python.executable()
        << ": run ci/fetch_old_pythons.sh DIR (ci/setup.sh does, into .cache/old-pythons) and give DIR as "
           "HB_OLD_PYTHONS or -DHANGBENCH_OLD_PYTHONS_DIR";
  HungPython h = start_hung_python(python);
  ASSERT_GT(h.pid, 0);
  Diagnosis d = diagnose_when_waiting(h);
  std::string text = render_text(d.snapshot, d.findings);
  end(h);

  ASSERT_EQ(d.exit_code, 0) << d.error;
  const ProcessSnapshot* rank = d.snapshot.find(h.pid);
  ASSERT_NE(rank, nullptr) << text;
  if (python.minor == 0)
    EXPECT_THAT(rank->python.version, ::testing::StartsWith("3.")) << rank->python.skipped_reason;
  else  // 3.11+ say their micro version too (Py_Version)
    EXPECT_THAT(rank->python.version, ::testing::AnyOf(python.version(), ::testing::StartsWith(python.version() + ".")))
        << rank->python.skipped_reason;
  ASSERT_EQ(rank->python.skipped_reason, "") << text;
  EXPECT_EQ(rank->stacks.debugger, "libdw");
  EXPECT_EQ(rank->stacks.skipped_reason, "") << text;

  // The main thread, newest first, as py-spy names it.
  const PythonThread* main = python_thread(*rank, h.main_tid);
  ASSERT_NE(main, nullptr) << text;
  ASSERT_GE(main->frames.size(), 3u) << text;
  EXPECT_EQ(main->frames[0].function, "wait_for_peer");
  EXPECT_EQ(main->frames[0].file, kScript);
  EXPECT_EQ(main->frames[0].line, line_of("return sock.recv(1)"));
  EXPECT_EQ(main->frames[1].function, "main");
  EXPECT_EQ(main->frames[1].file, kScript);
  EXPECT_EQ(main->frames[1].line, line_of("wait_for_peer(ours)"));
  EXPECT_EQ(main->frames[2].function, "<module>");
  EXPECT_EQ(main->frames[2].file, kScript);
  EXPECT_EQ(main->frames[2].line, line_of("    main()"));
  EXPECT_FALSE(main->holds_gil);

  // Merged: the C frames of recv() above the Python frame, the interpreter's start below.
  const StackThread* main_native = native_thread(*rank, h.main_tid);
  ASSERT_NE(main_native, nullptr) << text;
  int recv_at = -1, python_at = -1, start_at = -1;
  for (int i = 0; i < static_cast<int>(main_native->frames.size()); ++i) {
    const auto& f = main_native->frames[i];
    if (recv_at < 0 && !f.python && f.function.find("recv") != std::string::npos) recv_at = i;
    if (python_at < 0 && f.python && f.function == "wait_for_peer") python_at = i;
    if (f.function.find("main") != std::string::npos && !f.python) start_at = i;
  }
  EXPECT_GE(recv_at, 0) << text;
  EXPECT_GT(python_at, recv_at) << text;
  EXPECT_GT(start_at, python_at) << text;
  EXPECT_GT(index_of(main_native->frames, "main", true), python_at) << text;
  EXPECT_GT(index_of(main_native->frames, "<module>", true), index_of(main_native->frames, "main", true)) << text;
  EXPECT_GT(start_at, index_of(main_native->frames, "<module>", true)) << text;

  // The spinning thread holds the GIL.
  EXPECT_EQ(rank->python.gil_holder_tid, h.spin_tid) << text;
  const PythonThread* spinner = python_thread(*rank, h.spin_tid);
  ASSERT_NE(spinner, nullptr) << text;
  ASSERT_FALSE(spinner->frames.empty());
  EXPECT_EQ(spinner->frames[0].function, "spin_forever");
  EXPECT_EQ(spinner->frames[0].file, kScript);
  // Caught anywhere in its loop: at `pass` or at the `while True:` just above it.
  int pass_line = line_of("        pass");
  EXPECT_THAT(spinner->frames[0].line, ::testing::AnyOf(pass_line, pass_line - 1)) << text;
  EXPECT_TRUE(spinner->holds_gil);

  // The forked child (a target through --tree) sleeps in its own Python loop.
  const ProcessSnapshot* child = d.snapshot.find(h.child);
  ASSERT_NE(child, nullptr) << text;
  ASSERT_FALSE(child->python.threads.empty()) << text;
  ASSERT_FALSE(child->python.threads[0].frames.empty()) << text;
  EXPECT_EQ(child->python.threads[0].frames[0].function, "_worker_loop");
  EXPECT_EQ(child->python.threads[0].frames[0].line, line_of("time.sleep(3600)"));

  EXPECT_THAT(text,
              HasSubstr("wait_for_peer (" + kScript + ":" + std::to_string(line_of("return sock.recv(1)")) + ")"));
  EXPECT_THAT(text, HasSubstr("holds the GIL"));

  // The JSON keeps it all: judged again later, the frames are the same.
  Snapshot again = snapshot_from_json(to_json(d.snapshot));
  const ProcessSnapshot* stored = again.find(h.pid);
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(stored->python.gil_holder_tid, h.spin_tid);
  ASSERT_NE(python_thread(*stored, h.main_tid), nullptr);
  EXPECT_EQ(python_thread(*stored, h.main_tid)->frames[0].line, main->frames[0].line);
  ASSERT_NE(native_thread(*stored, h.main_tid), nullptr);
  EXPECT_EQ(native_thread(*stored, h.main_tid)->frames.size(), main_native->frames.size());
}

// threading.Thread(name="loader-7"): the name Python gave the thread, read from the
// Thread object in the interpreter's memory (its instance dict's "_name"), beside the OS
// name (python3: before 3.14 threading does not name the OS thread) in the text, the
// JSON, the wait-for graph's labels, and kept when the JSON is read back.
TEST_P(DiagnosePythonLive, ThreadingNameBesideTheOSName) {
  const Interpreter& python = GetParam();
  if (python.minor != 0) ASSERT_TRUE(std::filesystem::exists(python.executable())) << python.executable();
  const std::string script = std::string(HB_SOURCE_DIR) + "/tests/integration/python/named_thread.py";
  const StartedScript started = start_script(python, script, {});
  const int pid = started.pid;
  HungPython h;
  h.pid = pid;
  if (started.json.is_discarded()) {
    end(h);
    FAIL() << "named_thread.py printed: " << started.line;
  }
  const int loader = started.json["loader_tid"];

  DiagnoseRequest request;
  request.tree_root = pid;
  request.stacks = true;
  Diagnosis d;
  const PythonThread* t = nullptr;
  for (int attempt = 0; attempt < 200; ++attempt) {  // until the loader's frames are read (a bound only to fail)
    d = diagnose(request);
    const ProcessSnapshot* p = d.snapshot.find(pid);
    t = p ? python_thread(*p, loader) : nullptr;
    if (t && !t->frames.empty() && t->frames[0].function.find("load") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::string text = render_text(d.snapshot, d.findings);
  nlohmann::json json = diagnosis_json(d.snapshot, d.findings);
  end(h);

  ASSERT_EQ(d.exit_code, 0) << d.error;
  const ProcessSnapshot* p = d.snapshot.find(pid);
  ASSERT_NE(p, nullptr) << text;
  ASSERT_EQ(p->python.skipped_reason, "") << text;
  t = python_thread(*p, loader);
  ASSERT_NE(t, nullptr) << text;
  EXPECT_EQ(t->name, "loader-7") << text;
  // The main thread was not started by threading.Thread: no name is made up for it.
  ASSERT_NE(python_thread(*p, pid), nullptr);
  EXPECT_EQ(python_thread(*p, pid)->name, "") << text;

  std::string os_name;
  for (const auto& thread : p->threads)
    if (thread.tid == loader) os_name = thread.name;
  ASSERT_FALSE(os_name.empty()) << text;
  EXPECT_NE(os_name, "loader-7");  // what /proc says before 3.14: the program's name
  const std::string title = "thread " + std::to_string(loader) + " \"" + os_name + "\" (Python \"loader-7\")";
  EXPECT_THAT(text, HasSubstr(title)) << text;

  bool in_json = false;
  for (const auto& process : json["processes"])
    for (const auto& thread : process["threads"])
      if (process["pid"] == pid && thread["tid"] == loader) {
        EXPECT_EQ(thread["name"], os_name);
        EXPECT_EQ(thread.value("python_name", ""), "loader-7");
        in_json = true;
      }
  EXPECT_TRUE(in_json) << json.dump(1);
  bool labelled = false;
  for (const auto& node : build_wait_graph(d.snapshot).nodes)
    labelled = labelled || node.label.find(title) != std::string::npos;
  EXPECT_TRUE(labelled) << graph_dot(build_wait_graph(d.snapshot), false);

  Snapshot again = snapshot_from_json(to_json(d.snapshot));
  ASSERT_NE(again.find(pid), nullptr);
  ASSERT_NE(python_thread(*again.find(pid), loader), nullptr);
  EXPECT_EQ(python_thread(*again.find(pid), loader)->name, "loader-7");
}

INSTANTIATE_TEST_SUITE_P(EachInterpreter, DiagnosePythonLive,
                         ::testing::Values(Interpreter{0}, Interpreter{9}, Interpreter{13}), [](const auto& info) {
                           return info.param.minor == 0 ? std::string("python3_on_path")
                                                        : "python3_" + std::to_string(info.param.minor);
                         });

TEST_F(DiagnosePython, ANonPythonProcessGetsNativeFramesAndALine) {
  pid_t sleeper = ::fork();
  if (sleeper == 0) {
    ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until the child is sleep, not the forked test binary (whose libraries differ),
  // and is asleep in it: right after exec the loader is still mapping libc (a busy
  // machine showed a stack without nanosleep).
  std::string exe, wchan;
  for (int i = 0; i < 2000 && (exe.find("sleep") == std::string::npos || wchan.find("nanosleep") == std::string::npos);
       ++i) {
    char buf[4096] = {0};
    if (::readlink(("/proc/" + std::to_string(sleeper) + "/exe").c_str(), buf, sizeof buf - 1) > 0) exe = buf;
    std::ifstream("/proc/" + std::to_string(sleeper) + "/wchan") >> wchan;
    if (exe.find("sleep") == std::string::npos || wchan.find("nanosleep") == std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  PythonStacks python = read_python_stacks(sleeper);
  DebuggerStacks stacks = libdw_stacks(sleeper, 20);
  ::kill(sleeper, SIGKILL);
  ::waitpid(sleeper, nullptr, 0);
  EXPECT_THAT(python.skipped_reason, HasSubstr("not a CPython process"));
  EXPECT_TRUE(python.threads.empty());
  ASSERT_EQ(stacks.threads.size(), 1u) << stacks.skipped_reason;
  EXPECT_FALSE(stacks.threads[0].frames.empty());
  EXPECT_THAT(stacks.raw, HasSubstr("nanosleep"));
  // The C library's frames come from its symbol table alone (no source lines, so libc6-dbg's
  // DWARF is never inflated), and a versioned symbol loses its "@GLIBC_2.2.5".
  int libc_frames = 0;
  for (const auto& f : stacks.threads[0].frames) {
    if (f.module.rfind("libc.so", 0) != 0) continue;
    ++libc_frames;
    EXPECT_EQ(f.file, "") << f.function;
    EXPECT_EQ(f.function.find('@'), std::string::npos) << f.function;
  }
  EXPECT_GT(libc_frames, 0) << stacks.raw;
}

TEST_F(DiagnosePython, AProcessThatIsGoneIsALineNotAHang) {
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  PythonStacks python = read_python_stacks(gone);
  DebuggerStacks stacks = libdw_stacks(gone, 20);
  EXPECT_NE(python.skipped_reason, "");
  EXPECT_TRUE(python.threads.empty());
  EXPECT_NE(stacks.skipped_reason, "");
  EXPECT_THAT(stacks.skipped_reason, HasSubstr(std::to_string(gone)));
}
