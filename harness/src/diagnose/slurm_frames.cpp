// One node's diagnosis travels through srun's stdout as numbered lines of at
// most ~400 characters: srun with --label keeps lines whole, but lines from
// different nodes interleave, and long lines may be cut.
#include <fmt/format.h>

#include <map>
#include <sstream>

#include "hangbench/render.hpp"
#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::diagnose::slurm {
namespace {

constexpr const char* kTag = "hangbench-node";
constexpr size_t kChunk = 400;

diagnose::Finding finding_from_json(const nlohmann::json& j) {
  diagnose::Finding f;
  f.rule = j.value("rule", "");
  f.title = j.value("title", "");
  f.severity = severity_from_string(j.value("severity", "note"));
  f.summary = j.value("summary", "");
  f.facts = j.value("facts", std::vector<std::string>{});
  f.pids = j.value("pids", std::vector<int>{});
  f.tids = j.value("tids", std::vector<int>{});
  return f;
}

}  // namespace

nlohmann::json node_json(const NodeDiagnosis& node) {
  nlohmann::json j;
  j["host"] = node.host;
  j["error"] = node.error;
  j["processes"] = nlohmann::json::array();
  for (const auto& p : node.processes) {
    j["processes"].push_back({{"pid", p.pid}, {"rank", p.rank}, {"step", p.step}, {"comm", p.comm}});
  }
  if (node.error.empty()) j["diagnosis"] = diagnose::diagnosis_json(node.snapshot, node.findings);
  return j;
}

std::string encode_node(const NodeDiagnosis& node) {
  // ensure_ascii: no byte of the chunk is a newline or outside ASCII.
  std::string text = node_json(node).dump(-1, ' ', true);
  std::string host = node.host.empty() ? "unknown" : node.host;
  size_t total = (text.size() + kChunk - 1) / kChunk;
  std::string out;
  for (size_t i = 0; i < total; ++i) {
    out += fmt::format("{} {} {}/{} {}\n", kTag, host, i + 1, total, text.substr(i * kChunk, kChunk));
  }
  return out;
}

std::vector<NodeDiagnosis> decode_nodes(const std::string& srun_output) {
  struct Parts {
    size_t total = 0;
    std::map<size_t, std::string> chunks;
  };
  std::map<std::string, Parts> by_host;
  std::istringstream in(srun_output);
  for (std::string line; std::getline(in, line);) {
    auto at = line.find(kTag);  // after srun's "N: " label
    if (at == std::string::npos) continue;
    std::istringstream fields(line.substr(at + std::string(kTag).size()));
    std::string host, position;
    fields >> host >> position;
    auto slash = position.find('/');
    if (host.empty() || slash == std::string::npos) continue;
    size_t index = std::strtoul(position.c_str(), nullptr, 10);
    size_t total = std::strtoul(position.c_str() + slash + 1, nullptr, 10);
    std::string chunk;
    fields.get();  // the one space before the chunk
    std::getline(fields, chunk);
    by_host[host].total = total;
    by_host[host].chunks[index] = chunk;
  }
  std::vector<NodeDiagnosis> nodes;
  for (auto& [host, parts] : by_host) {
    NodeDiagnosis node;
    node.host = host;
    if (parts.chunks.size() != parts.total) {
      node.error = fmt::format("only {} of {} parts of the node's report arrived", parts.chunks.size(), parts.total);
      nodes.push_back(std::move(node));
      continue;
    }
    std::string text;
    for (auto& [i, chunk] : parts.chunks) text += chunk;
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      node.error = "the node's report is not JSON";
      nodes.push_back(std::move(node));
      continue;
    }
    try {
      node.error = j.value("error", "");
      for (const auto& p : j.value("processes", nlohmann::json::array())) {
        node.processes.push_back({p.value("pid", 0), p.value("rank", -1), p.value("step", ""), p.value("comm", "")});
      }
      if (j.contains("diagnosis")) {
        node.snapshot = diagnose::snapshot_from_json(j["diagnosis"]);
        for (const auto& f : j["diagnosis"].value("findings", nlohmann::json::array())) {
          node.findings.push_back(finding_from_json(f));
        }
      }
    } catch (const std::exception& e) {
      node.error = std::string("the node's report is unreadable: ") + e.what();
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace hangbench::diagnose::slurm
