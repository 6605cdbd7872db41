// Interposed ncclCommAbort / ncclCommDestroy (exported by the executable, so
// they come first in the global symbol scope, ahead of an LD_PRELOADed NCCL).
// They time the real call, and run a callback as the abort begins (to open a
// StreamGate). They see PyTorch's calls (c10d backend); the direct backend calls
// its dlopened library directly and reports through note_begin/note_end itself.
// Process-global by necessity: the dynamic linker decides who calls them.
#pragma once

#include <functional>
#include <string>

namespace hangbench::ddp::hooks {

enum class Call { Abort, Destroy };

struct CallRecord {
  int begun = 0;
  int finished = 0;
  double first_begin = 0;  // CLOCK_REALTIME seconds
  double last_end = 0;
  int last_result = 0;
};

// Called (once per call, on the calling thread) just before the real ncclCommAbort.
void on_abort_begin(std::function<void()> callback);

void note_begin(Call call);
void note_end(Call call, int result);
CallRecord record(Call call);

// Waits until at least one `call` has begun; false after timeout_s.
bool wait_begun(Call call, double timeout_s);
// Waits, without a deadline, until every begun `call` has finished: a hung
// ncclCommAbort keeps the process here, as it keeps a PyTorch job alive.
void wait_all_finished(Call call);

}  // namespace hangbench::ddp::hooks
