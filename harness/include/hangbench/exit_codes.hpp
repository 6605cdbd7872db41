// Exit codes of the hangbench CLI (README's table). The workloads have their own
// contract, workloads/common/exit_codes.hpp.
#pragma once

namespace hangbench::exit_code {

inline constexpr int kOk = 0;            // every expectation confirmed (or inconclusive)
inline constexpr int kContradicted = 1;  // an expectation contradicted
inline constexpr int kUsage = 2;         // usage or configuration error
inline constexpr int kInfra = 3;         // infrastructure error
// `hangbench watch`: the job hung and its evidence was captured (as timeout(1)'s 124).
inline constexpr int kHung = 124;

}  // namespace hangbench::exit_code
