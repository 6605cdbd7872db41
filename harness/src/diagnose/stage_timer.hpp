// Where a diagnosis's time went, printed on stderr stage by stage when enabled
// (`diagnose --timings`).
#pragma once

#include <string>

namespace hangbench::diagnose {

class StageTimer {
 public:
  explicit StageTimer(bool enabled);
  void mark(const std::string& stage);  // the time since the last mark, as this stage
  void print(const std::string& stage, double seconds) const;
  void total();

 private:
  bool enabled_;
  double last_;
  double first_;
};

}  // namespace hangbench::diagnose
