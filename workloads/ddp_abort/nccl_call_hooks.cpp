#include "nccl_call_hooks.hpp"

#include <dlfcn.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>

#include "phase.hpp"

namespace hangbench::ddp::hooks {

namespace {

struct State {
  std::mutex mutex;
  std::condition_variable changed;
  CallRecord abort_record, destroy_record;
  std::function<void()> abort_callback;
};

State& state() {
  static State s;  // constructed on first use; never destroyed before a hung call returns
  return s;
}

CallRecord& record_of(State& s, Call call) { return call == Call::Abort ? s.abort_record : s.destroy_record; }

using CommCall = int (*)(void*);

CommCall next_definition(const char* name) {
  auto fn = reinterpret_cast<CommCall>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) std::fprintf(stderr, "ddp_abort: no NCCL library in the process defines %s\n", name);
  return fn;
}

int forward(Call call, const char* name, void* comm) {
  static CommCall real_abort = next_definition("ncclCommAbort");
  static CommCall real_destroy = next_definition("ncclCommDestroy");
  CommCall real = call == Call::Abort ? real_abort : real_destroy;
  if (real == nullptr) return 3;  // ncclInternalError
  note_begin(call);
  int rc = real(comm);
  note_end(call, rc);
  return rc;
}

}  // namespace

void on_abort_begin(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().abort_callback = std::move(callback);
}

void note_begin(Call call) {
  State& s = state();
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    CallRecord& r = record_of(s, call);
    if (r.begun++ == 0) r.first_begin = phase::now_seconds();
    if (call == Call::Abort) callback = s.abort_callback;
  }
  s.changed.notify_all();
  if (callback) callback();
}

void note_end(Call call, int result) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    CallRecord& r = record_of(s, call);
    ++r.finished;
    r.last_end = phase::now_seconds();
    r.last_result = result;
  }
  s.changed.notify_all();
}

CallRecord record(Call call) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return record_of(state(), call);
}

bool wait_begun(Call call, double timeout_s) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  return s.changed.wait_for(lock, std::chrono::duration<double>(timeout_s),
                            [&] { return record_of(s, call).begun > 0; });
}

void wait_all_finished(Call call) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  s.changed.wait(lock, [&] { return record_of(s, call).finished >= record_of(s, call).begun; });
}

}  // namespace hangbench::ddp::hooks

// The interposers. ABI: ncclResult_t f(ncclComm_t), i.e. int f(void*).
extern "C" __attribute__((visibility("default"))) int ncclCommAbort(void* comm) {
  return hangbench::ddp::hooks::forward(hangbench::ddp::hooks::Call::Abort, "ncclCommAbort", comm);
}
extern "C" __attribute__((visibility("default"))) int ncclCommDestroy(void* comm) {
  return hangbench::ddp::hooks::forward(hangbench::ddp::hooks::Call::Destroy, "ncclCommDestroy", comm);
}
