#define PY_SSIZE_T_CLEAN
#include "embedded_python.hpp"

#include <Python.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>

namespace hangbench::embedded_python {

struct PythonProgressPump::State {
  std::function<void()> probe;
  std::atomic<std::uint64_t> probes{0};
  std::atomic<bool> running{false};
  std::mutex stop_mutex;       // serialises stop() callers
  bool stopped = false;        // guarded by stop_mutex
  PyObject* thread = nullptr;  // threading.Thread; owned, touched with the GIL only
  PyObject* stop_event = nullptr;
};

namespace {

using PumpState = PythonProgressPump::State;
constexpr const char* kCapsuleName = "hangbench_pump.State";

// CPython has one main interpreter per process; this flag enforces it.
std::atomic<bool> interpreter_alive{false};

PumpState* state_from(PyObject* capsule) {
  auto* holder = static_cast<std::shared_ptr<PumpState>*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  return holder == nullptr ? nullptr : holder->get();
}

// hangbench_pump.probe(handle): the native probe, called with the GIL held.
PyObject* pump_probe(PyObject*, PyObject* capsule) {
  PumpState* state = state_from(capsule);
  if (state == nullptr) return nullptr;
  state->probe();
  state->probes.fetch_add(1, std::memory_order_relaxed);
  Py_RETURN_NONE;
}

PyObject* pump_finished(PyObject*, PyObject* capsule) {
  PumpState* state = state_from(capsule);
  if (state == nullptr) return nullptr;
  state->running.store(false);
  Py_RETURN_NONE;
}

// Python threads carry no OS name; a name makes them findable in /proc and stacks.
PyObject* pump_set_thread_name(PyObject*, PyObject* name) {
  const char* text = PyUnicode_AsUTF8(name);
  if (text == nullptr) return nullptr;
  pthread_setname_np(pthread_self(), text);
  Py_RETURN_NONE;
}

PyMethodDef pump_methods[] = {{"probe", pump_probe, METH_O, "Call the native probe (the GIL is held)."},
                              {"finished", pump_finished, METH_O, "Mark the pump loop as exited."},
                              {"set_thread_name", pump_set_thread_name, METH_O, "Name the calling OS thread."},
                              {nullptr, nullptr, 0, nullptr}};

PyModuleDef pump_module = {PyModuleDef_HEAD_INIT,
                           "hangbench_pump",
                           "Native side of hangbench's Python progress pump.",
                           -1,
                           pump_methods,
                           nullptr,
                           nullptr,
                           nullptr,
                           nullptr};

PyObject* init_pump_module() { return PyModule_Create(&pump_module); }

constexpr const char* kPumpLoopSource = R"PY(
import hangbench_pump

def pump_loop(handle, stop, interval_s):
    hangbench_pump.set_thread_name("py_mpi_pump")
    try:
        while not stop.wait(interval_s):   # the wait releases the GIL; waking needs it back
            hangbench_pump.probe(handle)
    finally:
        hangbench_pump.finished(handle)
)PY";

void capsule_destructor(PyObject* capsule) {
  delete static_cast<std::shared_ptr<PumpState>*>(PyCapsule_GetPointer(capsule, kCapsuleName));
}

[[noreturn]] void throw_python_error(const std::string& what) {
  PyErr_Print();
  throw std::runtime_error(what + " (Python traceback on stderr)");
}

}  // namespace

Interpreter::Interpreter() {
  if (interpreter_alive.exchange(true)) {
    throw std::logic_error("embedded_python::Interpreter: one interpreter per process");
  }
  PyImport_AppendInittab("hangbench_pump", &init_pump_module);
  Py_InitializeEx(0);  // 0: leave signal handling to the program (and to mpirun)
  // Hand the GIL back: from here every thread, main included, takes it with GilHold.
  main_thread_state_ = PyEval_SaveThread();
}

Interpreter::~Interpreter() {
  PyEval_RestoreThread(static_cast<PyThreadState*>(main_thread_state_));
  Py_FinalizeEx();
  interpreter_alive.store(false);
}

std::string Interpreter::version() { return Py_GetVersion(); }

bool Interpreter::run(const std::string& source) {
  GilHold gil;
  return PyRun_SimpleString(source.c_str()) == 0;
}

GilHold::GilHold() : state_(static_cast<int>(PyGILState_Ensure())) {}
GilHold::~GilHold() { PyGILState_Release(static_cast<PyGILState_STATE>(state_)); }

bool this_thread_holds_gil() { return PyGILState_Check() == 1; }

PythonProgressPump::PythonProgressPump(std::function<void()> probe, std::chrono::microseconds interval)
    : state_(std::make_shared<State>()) {
  if (interval.count() <= 0) throw std::invalid_argument("PythonProgressPump: interval must be positive");
  state_->probe = std::move(probe);
  GilHold gil;
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* ran = PyRun_String(kPumpLoopSource, Py_file_input, globals, globals);
  if (ran == nullptr) {
    Py_DECREF(globals);
    throw_python_error("pump loop source failed");
  }
  Py_DECREF(ran);
  PyObject* loop = PyDict_GetItemString(globals, "pump_loop");  // borrowed
  PyObject* threading = PyImport_ImportModule("threading");
  if (threading == nullptr) {
    Py_DECREF(globals);
    throw_python_error("import threading failed");
  }
  state_->stop_event = PyObject_CallMethod(threading, "Event", nullptr);
  PyObject* capsule = PyCapsule_New(new std::shared_ptr<State>(state_), kCapsuleName, capsule_destructor);
  PyObject* args = Py_BuildValue("(OOd)", capsule, state_->stop_event, static_cast<double>(interval.count()) * 1e-6);
  PyObject* kwargs =
      Py_BuildValue("{s:O,s:O,s:s,s:O}", "target", loop, "args", args, "name", "mpi_pump", "daemon", Py_True);
  PyObject* thread_type = PyObject_GetAttrString(threading, "Thread");
  PyObject* empty = PyTuple_New(0);
  state_->thread = PyObject_Call(thread_type, empty, kwargs);
  Py_XDECREF(empty);
  Py_XDECREF(thread_type);
  Py_XDECREF(kwargs);
  Py_XDECREF(args);
  Py_XDECREF(capsule);
  Py_DECREF(threading);
  Py_DECREF(globals);
  if (state_->thread == nullptr || state_->stop_event == nullptr) throw_python_error("creating the pump thread failed");
  state_->running.store(true);
  PyObject* started = PyObject_CallMethod(state_->thread, "start", nullptr);
  if (started == nullptr) {
    state_->running.store(false);
    throw_python_error("starting the pump thread failed");
  }
  Py_DECREF(started);
}

PythonProgressPump::~PythonProgressPump() { stop(); }

void PythonProgressPump::stop() {
  std::lock_guard<std::mutex> lock(state_->stop_mutex);
  if (state_->stopped) return;
  state_->stopped = true;
  GilHold gil;
  if (state_->stop_event != nullptr) Py_XDECREF(PyObject_CallMethod(state_->stop_event, "set", nullptr));
  if (state_->thread != nullptr) Py_XDECREF(PyObject_CallMethod(state_->thread, "join", nullptr));
  if (PyErr_Occurred()) PyErr_Print();
  Py_CLEAR(state_->thread);
  Py_CLEAR(state_->stop_event);
  state_->running.store(false);
}

bool PythonProgressPump::is_running() const { return state_->running.load(); }

std::uint64_t PythonProgressPump::probe_count() const { return state_->probes.load(std::memory_order_relaxed); }

}  // namespace hangbench::embedded_python
