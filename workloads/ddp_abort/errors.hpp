// Errors that map to ddp_abort's documented exit codes.
#pragma once

#include <stdexcept>

namespace hangbench::ddp {

// Exit code 3: the machine or the set-up is not what the run needs (no GPU, NCCL
// not loadable, LD_PRELOAD not in effect). Anything else thrown maps to 4.
class InfrastructureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hangbench::ddp
