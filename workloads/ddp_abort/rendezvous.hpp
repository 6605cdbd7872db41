// Exchanging the NCCL unique id through a folder every rank sees (the trial
// folder): rank 0 writes it atomically, the others wait for it.
#pragma once

#include <string>

namespace hangbench::ddp {

// Writes `bytes` to DIR/NAME via a temporary file and rename(), so readers never see half.
void publish_blob(const std::string& dir, const std::string& name, const std::string& bytes);
// Waits up to timeout_s for DIR/NAME of exactly `size` bytes; throws std::runtime_error after.
std::string await_blob(const std::string& dir, const std::string& name, size_t size, double timeout_s);

}  // namespace hangbench::ddp
