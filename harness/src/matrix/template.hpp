// {name} templating for matrix strings. Names are [A-Za-z_][A-Za-z0-9_]*; braces
// around anything else (JSON in an argument, say) are left alone.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace hangbench::matrix_detail {

// Replaces every {name} found in `values`; names in `deferred` stay as they are
// (filled per trial). Returns the first unknown name through `unknown`.
std::string expand_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::set<std::string>& deferred, std::optional<std::string>& unknown);

}  // namespace hangbench::matrix_detail
