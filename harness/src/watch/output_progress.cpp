// What of a job's output counts as progress: every line but PyTorch's own log of a
// Flight Recorder dump, which watch's `fr` signal itself provokes (each request
// through a rank's pipe makes ProcessGroupNCCL log "preparing to dump debug info" to
// stderr): counted, those lines would make a rank that never answers look alive.
#include <string_view>

#include "hangbench/watch.hpp"

namespace hangbench::watch {

bool is_flight_recorder_dump_log(std::string_view line) {
  const bool pytorch =
      line.find("ProcessGroupNCCL") != std::string_view::npos || line.find("Flight Recorder") != std::string_view::npos;
  return pytorch && (line.find("dump debug info") != std::string_view::npos ||
                     line.find("dumping nccl trace") != std::string_view::npos ||
                     line.find("trace successfully dumped") != std::string_view::npos);
}

unsigned long long OutputProgress::add(std::string_view chunk) {
  unsigned long long counted = 0;
  for (char c : chunk) {
    line_.push_back(c);
    // A line ends at a newline or a carriage return (a progress bar redraws with \r);
    // a very long line without either is counted as it comes.
    if (c == '\n' || c == '\r' || line_.size() >= kLongestLine) {
      if (!is_flight_recorder_dump_log(line_)) counted += line_.size();
      line_.clear();
    }
  }
  return counted;
}

}  // namespace hangbench::watch
