// The renderings of a diagnosis (a snapshot and its findings): the terminal text,
// the paste-into-an-issue Markdown, and the JSON form (schema: docs/evidence.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/findings.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

std::string render_text(const Snapshot& s, const std::vector<Finding>& findings);
std::string render_markdown(const Snapshot& s, const std::vector<Finding>& findings);
nlohmann::json diagnosis_json(const Snapshot& s, const std::vector<Finding>& findings);

}  // namespace hangbench::diagnose
