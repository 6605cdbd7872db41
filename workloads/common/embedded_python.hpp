// An embedded CPython interpreter with a real GIL, for workloads that reproduce
// "a thread holds the interpreter lock inside a native call" deadlocks.
//
// Three pieces:
//  - Interpreter: starts CPython once per process and hands the GIL back, so
//    that any thread (executor, pump) can take it.
//  - GilHold: takes the GIL for a scope (PyGILState_Ensure/Release). A native
//    call made inside the scope blocks every Python thread, exactly like a C
//    extension that does not release the GIL around a blocking call.
//  - PythonProgressPump: a Python threading.Thread that, every interval, calls
//    a native probe function through the built-in module `hangbench_pump`. The
//    probe runs with the GIL held, so the pump makes progress only while no
//    other thread keeps the GIL: the TensorRT-LLM relay pump's weakness.
//
// The header does not include Python.h: users link hangbench_embedded_python.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace hangbench::embedded_python {

// Owns the process's interpreter. Construct it on the main thread before any
// other piece; destroy it after every pump has stopped. A second live instance
// throws std::logic_error (CPython allows one main interpreter).
class Interpreter {
 public:
  Interpreter();
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // "3.11.2 (main, ...)" as sys.version reports it.
  static std::string version();

  // Runs Python source in __main__ with the GIL taken for the call.
  // Returns false (and prints the traceback to stderr) if it raised.
  static bool run(const std::string& source);

 private:
  void* main_thread_state_ = nullptr;  // PyThreadState* saved when the GIL was handed back
};

// Holds the GIL from construction to destruction. Usable from any thread,
// including threads Python has never seen.
class GilHold {
 public:
  GilHold();
  ~GilHold();
  GilHold(const GilHold&) = delete;
  GilHold& operator=(const GilHold&) = delete;

 private:
  int state_;  // PyGILState_STATE, kept as int to keep Python.h out of the header
};

// True when the calling thread holds the GIL (PyGILState_Check).
bool this_thread_holds_gil();

// A Python thread (threading.Thread, name "mpi_pump"; OS thread name
// "py_mpi_pump") that loops `while not stop.wait(interval): probe()`.
// `probe` is called from that thread with the GIL held; it must not throw.
class PythonProgressPump {
 public:
  // Starts the thread. Requires a live Interpreter; takes the GIL briefly.
  // Throws std::invalid_argument for a non-positive interval and
  // std::runtime_error if Python fails to start the thread.
  PythonProgressPump(std::function<void()> probe, std::chrono::microseconds interval);
  ~PythonProgressPump();  // calls stop()
  PythonProgressPump(const PythonProgressPump&) = delete;
  PythonProgressPump& operator=(const PythonProgressPump&) = delete;

  // Sets the stop event and joins the Python thread (takes the GIL; join
  // itself releases it while waiting). Idempotent. Blocks for as long as
  // another thread keeps the GIL, which is the point of the pump's weakness.
  void stop();
  bool is_running() const;
  std::uint64_t probe_count() const;

  struct State;  // shared with the Python side (public so the .cpp's callbacks can name it)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace hangbench::embedded_python
