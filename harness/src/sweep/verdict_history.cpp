// Each release's verdict, night after night, in a small SQLite file: the nightly
// fails when a release changes verdict or a release never seen before is vulnerable.
#include <fmt/format.h>
#include <sqlite3.h>

#include "hangbench/provenance.hpp"
#include "hangbench/store.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::sweep {
namespace {

class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) fail("cannot open");
    sqlite3_busy_timeout(db_, 10000);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail("cannot write");
  }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) fail("cannot read");
    return stmt;
  }
  [[noreturn]] void fail(const char* what) {
    throw StoreError(fmt::format("sweep history {}: {} ({})", path_, what, db_ ? sqlite3_errmsg(db_) : "no handle"));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string key_of(const Row& row) {
  return row.facts.package.empty() ? row.facts.release : row.facts.package + "==" + row.facts.release;
}

std::string text_column(sqlite3_stmt* stmt, int column) {
  const auto* text = sqlite3_column_text(stmt, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

}  // namespace

std::vector<HistoryChange> record_in_history(const std::string& history_path, const Result& result) {
  Db db(history_path);
  db.exec(
      "CREATE TABLE IF NOT EXISTS release_verdicts (night TEXT NOT NULL, run_id TEXT NOT NULL, release_key TEXT NOT "
      "NULL, release TEXT, package TEXT, library_sha256 TEXT, verdict TEXT NOT NULL, teardown_hangs INTEGER, counted "
      "INTEGER, PRIMARY KEY (run_id, release_key))");
  std::vector<HistoryChange> changes;
  sqlite3_stmt* last = db.prepare(
      "SELECT verdict FROM release_verdicts WHERE release_key = ? AND run_id != ? ORDER BY night DESC, rowid DESC "
      "LIMIT 1");
  for (const Row& row : result.rows) {
    if (!row.judged() || row.facts.release.empty()) continue;
    const std::string key = key_of(row), verdict = validate::to_string(row.decision.verdict);
    sqlite3_reset(last);
    sqlite3_bind_text(last, 1, key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(last, 2, result.run_id.c_str(), -1, SQLITE_TRANSIENT);
    const bool seen = sqlite3_step(last) == SQLITE_ROW;
    const std::string before = seen ? text_column(last, 0) : "";
    if (seen ? before != verdict : row.decision.verdict == validate::Verdict::Vulnerable) {
      changes.push_back({row.facts.release, before, verdict});
    }
  }
  sqlite3_finalize(last);

  db.exec("BEGIN IMMEDIATE");
  sqlite3_stmt* insert = db.prepare(
      "INSERT OR REPLACE INTO release_verdicts (night, run_id, release_key, release, package, library_sha256, "
      "verdict, teardown_hangs, counted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const std::string night = result.provenance.started_at.empty() ? utc_now_iso8601() : result.provenance.started_at;
  for (const Row& row : result.rows) {
    if (!row.judged() || row.facts.release.empty()) continue;
    const std::string key = key_of(row), verdict = validate::to_string(row.decision.verdict);
    const std::string sha = row.facts.original_sha256.empty() ? row.inspected.sha256 : row.facts.original_sha256;
    sqlite3_reset(insert);
    int i = 1;
    for (const std::string* text :
         {&night, &result.run_id, &key, &row.facts.release, &row.facts.package, &sha, &verdict}) {
      sqlite3_bind_text(insert, i++, text->c_str(), -1, SQLITE_TRANSIENT);
    }
    sqlite3_bind_int(insert, i++, row.arm.teardown_hangs);
    sqlite3_bind_int(insert, i++, row.arm.counted());
    if (sqlite3_step(insert) != SQLITE_DONE) {
      sqlite3_finalize(insert);
      db.fail("cannot record a verdict");
    }
  }
  sqlite3_finalize(insert);
  db.exec("COMMIT");
  return changes;
}

}  // namespace hangbench::sweep
