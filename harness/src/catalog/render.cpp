// `hangbench catalog list | show ID`: words and JSON of the embedded entries.
#include <fmt/format.h>

#include <sstream>

#include "hangbench/catalog.hpp"

namespace hangbench::catalog {
namespace {

std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ") {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string remedy_text(const Remedy& r) {
  if (!r.measured) return fmt::format("{} (unmeasured: {})", r.action, r.why);
  return fmt::format("{} ({} vs {} hung: {}, {})", r.action, r.a_hangs, r.b_hangs, r.comparison, r.report);
}

}  // namespace

std::string list_text() {
  std::ostringstream out;
  for (const auto& e : entries()) {
    out << fmt::format("{}\n  {}\n  claimed: {}\n  measured: {}\n", e.id, e.title, claimed_range_text(e),
                       measured_range_text(e));
  }
  out << fmt::format("{} entries; `hangbench catalog show ID` for one in full\n", entries().size());
  return out.str();
}

std::string show_text(const Entry& e) {
  std::ostringstream out;
  out << e.id << ": " << e.title << "\n\n" << e.mechanism << "\n\n";
  out << "claimed:   " << claimed_range_text(e) << "\n";
  out << "measured:  " << measured_range_text(e) << "\n";
  for (const auto& r : e.measured.releases) {
    const std::string tally = r.counted < 0 ? "counts not in the table" : fmt::format("{}/{} hung", r.hangs, r.counted);
    out << fmt::format("  {:<14} {:<15} {}, p vs fixed reference {}, p vs vulnerable {}\n", r.release, r.verdict, tally,
                       r.p_vs_fixed.empty() ? "-" : r.p_vs_fixed, r.p_vs_vulnerable.empty() ? "-" : r.p_vs_vulnerable);
  }
  if (!e.upstream.empty()) out << "upstream:\n";
  for (const auto& u : e.upstream) out << fmt::format("  {} {}: {}\n", u.kind, u.url, u.what);
  const Reproducer& p = e.reproducer;
  out << fmt::format(
      "reproducer: workloads/{} {}; matrix {}{}{}\n", p.workload, join(p.args, " "), p.matrix.empty() ? "-" : p.matrix,
      p.filter.empty() ? "" : " --filter " + join(p.filter, " --filter "),
      p.sweepable()
          ? fmt::format("; sweep --hang {} (references {} and {})", e.id, p.vulnerable_reference, p.fixed_reference)
          : "");
  if (!p.note.empty()) out << "  note: " << p.note << "\n";
  if (const std::string command = reproduce_command(e); !command.empty()) out << "reproduce: " << command << "\n";
  out << "static check: "
      << (!e.static_check.empty()  ? fmt::format("{} ({}): {}", e.static_check, e.static_command, e.static_says)
          : !e.static_none.empty() ? "none: " + e.static_none
                                   : "none")
      << "\n";
  out << "diagnose rules: " << (e.rules.empty() ? "none" : join(e.rules))
      << (e.facts.empty() ? "" : " with the facts " + join(e.facts))
      << (e.diagnose_note.empty() ? "" : " (" + e.diagnose_note + ")") << "\n";
  out << "remedies:\n";
  for (const auto& r : e.remedies) out << "  " << remedy_text(r) << "\n";
  out << "file: " << e.file << "\n";
  return out.str();
}

std::string reproduce_command(const Entry& e) {
  const Reproducer& p = e.reproducer;
  if (!p.sweepable()) {
    if (p.matrix.empty()) return "";
    return "hangbench run --matrix " + p.matrix + (p.filter.empty() ? "" : " --filter " + join(p.filter, " --filter "));
  }
  std::vector<std::string> wheels, pinned;
  for (const auto& ref : {p.vulnerable_reference, p.fixed_reference})
    (ref.rfind("wheel:", 0) == 0 ? wheels : pinned).push_back(ref.rfind("wheel:", 0) == 0 ? ref.substr(6) : ref);
  std::vector<std::string> steps;
  if (!wheels.empty()) steps.push_back("hangbench nccl fetch " + join(wheels, " "));
  if (!pinned.empty()) steps.push_back("hangbench nccl build --variant " + join(pinned, " --variant "));
  std::string sweep = "hangbench sweep --hang " + e.id;
  for (const auto& w : wheels) sweep += " .cache/nccl/vendor/nvidia-nccl-cu12-" + w + "-*/lib/libnccl.so.2";
  if (wheels.empty()) sweep += " LIB  # LIB: the libnccl.so.2 to judge";
  steps.push_back(sweep);
  return join(steps, " && ");
}

nlohmann::json to_json(const Entry& e) {
  nlohmann::json upstream = nlohmann::json::array();
  for (const auto& u : e.upstream) upstream.push_back({{"kind", u.kind}, {"url", u.url}, {"what", u.what}});
  nlohmann::json remedies = nlohmann::json::array();
  for (const auto& r : e.remedies) {
    nlohmann::json j = {{"action", r.action}, {"measured", r.measured}};
    if (r.measured) {
      j.update({{"report", r.report}, {"comparison", r.comparison}, {"a_hangs", r.a_hangs}, {"b_hangs", r.b_hangs}});
    } else {
      j["why"] = r.why;
    }
    remedies.push_back(j);
  }
  nlohmann::json releases = nlohmann::json::array();
  for (const auto& r : e.measured.releases)
    releases.push_back({{"release", r.release},
                        {"version", r.version},
                        {"verdict", r.verdict},
                        {"hangs", r.hangs},
                        {"counted", r.counted},
                        {"p_vs_fixed", r.p_vs_fixed},
                        {"p_vs_vulnerable", r.p_vs_vulnerable}});
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : e.measured.cells)
    cells.push_back({{"report", c.report}, {"cell", c.cell}, {"found", c.found}, {"n", c.n}, {"hangs", c.hangs}});
  const Reproducer& p = e.reproducer;
  return {{"schema", "hangbench.catalog/1"},
          {"id", e.id},
          {"title", e.title},
          {"mechanism", e.mechanism},
          {"file", e.file},
          {"claimed",
           {{"affected", e.claimed_affected},
            {"fixed", e.claimed_fixed},
            {"fix_needs", e.fix_needs},
            {"source", e.claimed_source}}},
          {"upstream", upstream},
          {"reproducer",
           {{"workload", p.workload},
            {"args", p.args},
            {"phase", p.phase},
            {"vulnerable_reference", p.vulnerable_reference},
            {"fixed_reference", p.fixed_reference},
            {"matrix", p.matrix},
            {"filter", p.filter},
            {"sweepable", p.sweepable()},
            {"command", reproduce_command(e)}}},
          {"static_check", e.static_check.empty() ? (e.static_none.empty() ? nlohmann::json(nullptr)
                                                                           : nlohmann::json{{"none", e.static_none}})
                                                  : nlohmann::json{{"name", e.static_check},
                                                                   {"command", e.static_command},
                                                                   {"says", e.static_says},
                                                                   {"string", e.static_string},
                                                                   {"present_means", e.static_present_means}}},
          {"diagnose", {{"rules", e.rules}, {"facts", e.facts}, {"note", e.diagnose_note}}},
          {"remedies", remedies},
          {"measured",
           {{"text", measured_range_text(e)},
            {"sweep", e.measured.sweep},
            {"also", e.measured.also},
            {"sweep_found", e.measured.sweep_found},
            {"affected", e.measured.affected},
            {"fixed_from", e.measured.fixed_from},
            {"fixed", e.measured.fixed},
            {"not_affected", e.measured.not_affected},
            {"unjudged", e.measured.unjudged},
            {"releases", releases},
            {"cells", cells}}}};
}

}  // namespace hangbench::catalog
