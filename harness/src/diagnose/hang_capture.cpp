// The executor's HangCapture, implemented by the diagnosis: a hung trial's
// request becomes capture_to_dir's options.
#include "hangbench/hang_capture.hpp"

#include "hangbench/evidence.hpp"

namespace hangbench::diagnose {
namespace {

class DiagnoseHangCapture : public HangCapture {
 public:
  std::string capture(const HangCaptureRequest& request) const override {
    CaptureOptions opts;
    opts.stacks = request.stacks;
    opts.provenance = request.provenance;
    opts.trial_env_entry = request.trial_env_entry;
    for (const auto& w : request.phase_writers) opts.phase_writers.push_back({w.pid, w.rank, w.host});
    return capture_to_dir(request.pids, request.dir, opts).summary;
  }
};

}  // namespace

std::shared_ptr<const HangCapture> make_hang_capture() { return std::make_shared<DiagnoseHangCapture>(); }

}  // namespace hangbench::diagnose
