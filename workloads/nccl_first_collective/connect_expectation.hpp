// When does this NCCL connect a communicator's rings: at init or at its first collective?
// The workload reports the answer beside its phases, so that a matrix cell that reads
// "no hang" on a 2.22.3+ release says whether the hang could happen there at all.
#pragma once

namespace hangbench::nccl_first_collective {

// Read off NCCL's tagged sources (v2.22.3-1 on, init.cc and misc/cudawrap.cc):
//   comm->runtimeConn = cuMemSupport && NCCL_RUNTIME_CONNECT (default 1);
//   cuMem: NCCL_CUMEM_ENABLE when it is 0 or more, else (-2, the default) the driver's support.
// `version_code` is ncclGetVersion's (22203 for 2.22.3); a null variable is unset.
bool connects_at_first_collective(int version_code, bool cumem_supported, const char* cumem_enable_variable,
                                  const char* runtime_connect_variable);

}  // namespace hangbench::nccl_first_collective
