// Reads each shard's store: the latest run, which must be a `run --shard` run.
#include <filesystem>

#include "hangbench/matrix.hpp"
#include "hangbench/merge.hpp"
#include "hangbench/store.hpp"

namespace fs = std::filesystem;

namespace hangbench {

std::vector<ShardRun> read_shards(const std::vector<std::string>& stores) {
  if (stores.empty()) throw UsageError("no shard stores given");
  std::vector<ShardRun> shards;
  for (const auto& given : stores) {
    fs::path path = given;
    if (fs::is_directory(path)) path /= "hangbench.sqlite";
    // Store::open would create a missing database: a typo must not become an empty shard.
    if (!fs::is_regular_file(path)) throw UsageError("no store at " + path.string());
    Store store = Store::open_read_only(path.string());
    auto run_id = store.latest_run();
    if (!run_id) throw UsageError("the store " + path.string() + " holds no run");
    StoredRun run = store.load_run(*run_id);
    if (!run.info.shard) {
      throw ConfigError(
          "", 0, "run " + *run_id + " in " + path.string() + " is not a shard (it was not run with --shard K/N)");
    }
    shards.push_back({path.string(), *run_id, *run.info.shard, std::move(run.matrix), std::move(run.provenance),
                      std::move(run.trials)});
  }
  return shards;
}

}  // namespace hangbench
