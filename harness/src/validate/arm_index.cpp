#include "validate/arm_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "hangbench/atomic_write.hpp"
#include "hangbench/store.hpp"

namespace hangbench::validate {
namespace {

namespace fs = std::filesystem;
constexpr const char* kIndexFile = "references.json";

nlohmann::json read_index(const std::string& out_dir) {
  std::ifstream in(fs::path(out_dir) / kIndexFile);
  if (!in) return nlohmann::json::object();
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

// Stores inside the folder are entered relative to it, so that the folder can be moved
// (a device call's output carried back and resumed elsewhere); older indexes hold
// absolute paths, which still resolve.
std::string entered_path(const std::string& out_dir, const std::string& store_path) {
  const fs::path base = fs::absolute(out_dir).lexically_normal();
  const fs::path store = fs::absolute(store_path).lexically_normal();
  const fs::path relative = store.lexically_relative(base);
  if (!relative.empty() && *relative.begin() != "..") return relative.string();
  return store.string();
}

}  // namespace

ArmIndex::ArmIndex(std::string out_dir, bool empty)
    : out_dir_(std::move(out_dir)), index_(empty ? nlohmann::json::object() : read_index(out_dir_)) {}

bool ArmIndex::reuse(const Keys& keys, int trials, const std::string& teardown_phase, ArmTally& arm,
                     std::ostream* log) const {
  nlohmann::json entry;
  // An entry under the key of an older index is reused only if the run's own cell had the
  // deadline asked for (read below).
  std::optional<double> deadline_to_check;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index_.contains(keys.key)) {
      entry = index_[keys.key];
    } else if (keys.deadline_s > 0 && keys.before_deadlines != keys.key && index_.contains(keys.before_deadlines)) {
      entry = index_[keys.before_deadlines];
      deadline_to_check = keys.deadline_s;
    } else {
      return false;
    }
  }
  try {
    fs::path store_path = entry.at("store").get<std::string>();
    if (store_path.is_relative()) store_path = fs::path(out_dir_) / store_path;
    Store store = Store::open(store_path.string());  // read-write: a run cut off may leave a WAL to recover
    std::string run_id = entry.value("run", "");
    if (run_id.empty()) run_id = store.latest_run().value_or("");
    StoredRun run = store.load_run(run_id);
    if (deadline_to_check) {
      const std::string cell_id = entry.at("cell").get<std::string>();
      const auto cell = std::find_if(run.matrix.cells.begin(), run.matrix.cells.end(),
                                     [&](const Cell& c) { return c.id == cell_id; });
      if (cell == run.matrix.cells.end()) return false;
      const auto deadline = cell->phase_timeouts_s.find(teardown_phase);
      if (deadline == cell->phase_timeouts_s.end() || deadline->second != *deadline_to_check) return false;
    }
    ArmTally tallied = arm;
    tally_trials(tallied, run.trials, entry.at("cell").get<std::string>(), teardown_phase);
    if (tallied.ended() < trials) return false;
    tallied.reused = true;
    tallied.source = fmt::format("store {} run {}", store_path.string(), run.info.id);
    tallied.run_id = run.info.id;
    tallied.run_dir =
        fs::absolute(store_path).parent_path().lexically_normal().string();  // links resolve from any --out
    tallied.provenance = run.provenance;
    arm = std::move(tallied);
    return true;
  } catch (const std::exception& e) {
    if (log)
      *log << fmt::format("validate: cannot reuse the {} arm ({}): {}; running it again\n", to_string(arm.role),
                          arm.library, e.what());
    return false;
  }
}

void ArmIndex::enter(const std::vector<Record>& records) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Record& r : records)
    index_[r.key] = {
        {"store", entered_path(out_dir_, r.store)}, {"run", r.run_id}, {"cell", r.cell}, {"library", r.library}};
  save_locked();
}

void ArmIndex::save_locked() const {
  fs::create_directories(out_dir_);
  write_file_atomically((fs::path(out_dir_) / kIndexFile).string(), index_.dump(2) + "\n");
}

}  // namespace hangbench::validate
