// `hangbench validate --nccl LIB --hang ID|all`: one library judged against catalog
// entries, each with its own reproducer and references (from the NCCL cache): the
// sweep's machinery over one row. Exit 0 when every entry judged it healthy, 1 when one
// found it vulnerable, 3 when an entry could not judge it (and none found it vulnerable).
#include "cli/validate_hang.hpp"

#include <iostream>

#include "cli/guarded.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::cli {

int validate_against_catalog(const validate::Request& design, const std::vector<std::string>& hangs,
                             const std::string& markdown, const std::string& json) {
  return guarded("validate", [&]() -> int {
    // --nccl is not required by the parser since --patch may stand in for it, which --hang excludes.
    if (design.library.empty()) throw UsageError("--hang judges one library: pass --nccl LIB");
    sweep::Request r;
    r.design = design;
    r.libraries = {design.library};
    r.hangs = hangs;
    r.argv = design.argv;
    const sweep::Result result = sweep::run(r, nullptr, &std::cerr);
    if (!markdown.empty()) write_file_atomically(markdown, sweep::to_markdown(result));
    if (!json.empty()) write_file_atomically(json, sweep::to_json(result).dump(2) + "\n");
    for (const auto& line : sweep::hang_summary(result)) std::cout << line << "\n";
    bool vulnerable = false, unjudged = false;
    for (const auto& column : result.hangs) {
      const std::string word = column.references_separate && !column.cells.empty()
                                   ? sweep::verdict_word(column.cells.front().verdict)
                                   : "not judged";
      std::cout << "  " << column.id << ": " << (column.cells.empty() ? "not run" : column.cells.front().verdict)
                << "\n";
      vulnerable = vulnerable || word == "vulnerable";
      unjudged =
          unjudged || !(word == "vulnerable" || word == "fixed" || word == "not affected" || word == "not vulnerable");
    }
    return vulnerable ? exit_code::kContradicted : unjudged ? exit_code::kInfra : exit_code::kOk;
  });
}

}  // namespace hangbench::cli
