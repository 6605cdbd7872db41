// capture_to_dir(): the executor's entry point, before it kills a hung trial.
#include <filesystem>
#include <fstream>

#include "hangbench/diagnose.hpp"
#include "hangbench/evidence.hpp"

namespace hangbench::evidence {

namespace {

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

CaptureResult capture_to_dir(const std::vector<int>& pids, const std::string& dir, const CaptureOptions& opts) {
  SnapshotOptions snapshot_options;
  snapshot_options.stacks = opts.stacks;
  snapshot_options.debugger = opts.debugger;
  Snapshot snapshot = take_snapshot(pids, snapshot_options);
  auto findings = find_hang_shapes(snapshot);

  CaptureResult result;
  result.summary = summary_paragraph(snapshot, findings);
  result.json = diagnosis_json(snapshot, findings);
  if (!opts.provenance.is_null()) result.json["provenance"] = opts.provenance;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path folder(dir);
  if (write_file(folder / "evidence.json", result.json.dump(2) + "\n")) result.files.push_back("evidence.json");
  if (write_file(folder / "evidence.txt", render_text(snapshot, findings))) result.files.push_back("evidence.txt");
  for (const auto& p : snapshot.processes) {
    if (p.stacks.raw.empty()) continue;
    std::string name = "stacks-" + std::to_string(p.info.pid) + ".txt";
    if (write_file(folder / name, p.stacks.raw)) result.files.push_back(name);
  }
  return result;
}

}  // namespace hangbench::evidence
