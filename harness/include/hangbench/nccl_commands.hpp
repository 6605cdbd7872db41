// The `hangbench nccl` subcommands without CLI11: each takes parsed options,
// writes to the given streams and returns the exit code of what it found (0, or
// inspect --require-fix's verdict); a failure is thrown (hangbench/errors.hpp) and
// becomes its exit code in cli/guarded.cpp, as for every command. inspect alone
// goes on past a library it cannot read, saying and counting its error the same way.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "hangbench/nccl_build.hpp"
#include "hangbench/nccl_vendor.hpp"

namespace hangbench::nccl {

// --json prints one document, schema hangbench.nccl-inspect/1 (docs/json-schema.md).
// With require_fix, a library whose fix is absent makes the exit code 1, and one
// where the file cannot tell makes it 3 (inconclusive), as for `validate`.
int inspect_command(const std::vector<std::string>& libraries, bool json, bool try_dlopen, std::ostream& out,
                    std::ostream& err, bool require_fix = false);
// `recipe_dir` "" = the repository's third_party/nccl with patches under the repository root.
int build_command(const BuildOptions& options, const std::string& recipe_dir, bool json, std::ostream& out,
                  std::ostream& err);
// `hangbench nccl fetch`: vendor wheels into the cache.
int fetch_command(const VendorRequest& request, bool json, std::ostream& out, std::ostream& err);
int list_command(const std::string& cache_dir, bool json, std::ostream& out, std::ostream& err);
// `hangbench nccl slim`: `output` (with a <output>.slim.json sidecar) or, for a
// library in a cache entry, `entry_out` (a slimmed copy of the whole entry).
int slim_command(const std::string& library, const std::string& output, const std::string& entry_out, uint32_t keep_sm,
                 bool json, std::ostream& out, std::ostream& err);
int shim_command(const std::string& torch_lib, const std::string& nccl_lib, const std::string& output, int error_code,
                 std::ostream& out, std::ostream& err);

}  // namespace hangbench::nccl
