// SQLite results store. WAL journal + synchronous=NORMAL: a committed trial row
// survives a SIGKILL of the harness; each trial is its own transaction.
#include "hangbench/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "hangbench/paths.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench {
namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  matrix_json TEXT NOT NULL,
  provenance_json TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL,
  shard TEXT
);
CREATE TABLE IF NOT EXISTS trials (
  run_id TEXT NOT NULL REFERENCES runs(id),
  cell_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  exit_code INTEGER,
  signal INTEGER,
  started_at REAL,
  wall_s REAL,
  hung_phase TEXT,
  phases_json TEXT,
  metrics_json TEXT,
  evidence_dir TEXT,
  evidence_summary TEXT,
  survivors_json TEXT,
  infra_error TEXT,
  host TEXT,
  UNIQUE(run_id, cell_id, idx)
);
)sql";

// " (in FILE: OS error)": a full disk or a locked database names the store it could
// not write, and what the system said (SQLite may only say "disk I/O error").
std::string in_file(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  int err = sqlite3_system_errno(db);
  std::string os = err > 0 ? std::string(": ") + std::strerror(err) : "";
  return file && *file ? std::string(" (in ") + file + os + ")" : os;
}

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw StoreError(std::string("sqlite prepare failed: ") + sqlite3_errmsg(db) + in_file(db));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, int v) {
    sqlite3_bind_int(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  // true while a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(std::string("sqlite step failed: ") + sqlite3_errmsg(db_) + in_file(db_));
  }
  std::string text(int col) const {
    auto p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int integer(int col) const { return sqlite3_column_int(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

nlohmann::json parse_json_or(const std::string& text, nlohmann::json fallback) {
  if (text.empty()) return fallback;
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)), mutex_(std::make_unique<std::mutex>()) {}
Store::Store(Store&& o) noexcept : db_(o.db_), path_(std::move(o.path_)), mutex_(std::move(o.mutex_)) {
  o.db_ = nullptr;
}
Store& Store::operator=(Store&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close(db_);
    db_ = o.db_;
    path_ = std::move(o.path_);
    mutex_ = std::move(o.mutex_);
    o.db_ = nullptr;
  }
  return *this;
}
Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string message = err ? err : "unknown error";
    sqlite3_free(err);
    throw StoreError("sqlite: " + message + in_file(db_));
  }
}

Store Store::open(const std::string& path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    if (db) sqlite3_close(db);
    throw StoreError("cannot open the store " + path + ": " + message);
  }
  sqlite3_busy_timeout(db, 5000);
  Store store(db, path);
  // A database that holds tables but not ours is someone else's: refuse it before
  // anything (WAL mode, the schema) is written into it.
  {
    Statement tables(db, "SELECT count(*), sum(name = 'schema_version') FROM sqlite_master WHERE type = 'table'");
    if (tables.step() && tables.integer(0) > 0 && tables.integer(1) == 0) {
      throw StoreInputError(path +
                            " is not a hangbench store (an SQLite database without hangbench's schema_version "
                            "table); nothing was written to it");
    }
  }
  store.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  store.exec("BEGIN IMMEDIATE;");
  store.exec(kSchema);
  int version = 0;
  {
    Statement read_version(db, "SELECT version FROM schema_version LIMIT 1");
    if (read_version.step()) version = read_version.integer(0);
  }
  if (version == 0) {
    store.exec(("INSERT INTO schema_version(version) VALUES (" + std::to_string(kStoreSchemaVersion) + ");").c_str());
  } else if (version > kStoreSchemaVersion) {
    store.exec("ROLLBACK;");
    throw StoreError("the store " + path + " has schema version " + std::to_string(version) +
                     ", newer than this hangbench understands (" + std::to_string(kStoreSchemaVersion) + ")");
  }
  store.add_missing_columns();
  store.exec("COMMIT;");
  return store;
}

namespace {

// A path as an SQLite URI's file part: only '%', '?' and '#' need escaping.
std::string uri_path(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

sqlite3* open_uri(const std::string& uri) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    if (db) sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  return db;
}

// The schema version, or the SQLite error code (negated) when the file cannot be read as a store.
int read_schema_version(sqlite3* db, std::string& error) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT version FROM schema_version LIMIT 1", -1, &stmt, nullptr);
  int version = 0;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) version = sqlite3_column_int(stmt, 0);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) error = sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  return rc == SQLITE_OK ? version : -(rc & 0xff);
}

}  // namespace

Store Store::open_read_only(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw StoreInputError("no store at " + path);
  // A WAL beside the store may hold rows a writer has not checkpointed: read it
  // (mode=ro). Without one the file is the whole database, and immutable=1 reads it
  // without making -wal or -shm files (a read-only file system, a shared folder).
  const bool wal = std::filesystem::exists(path + "-wal", ec);
  const std::string base = "file:" + uri_path(path) + "?mode=ro";
  std::string error;
  for (const bool immutable : {!wal, true}) {
    sqlite3* db = open_uri(base + (immutable ? "&immutable=1" : ""));
    if (!db) {
      error = "cannot open it";
      continue;
    }
    int version = read_schema_version(db, error);
    if (version > kStoreSchemaVersion) {
      sqlite3_close(db);
      throw StoreError("the store " + path + " has schema version " + std::to_string(version) +
                       ", newer than this hangbench understands (" + std::to_string(kStoreSchemaVersion) + ")");
    }
    if (version > 0) return Store(db, path);
    sqlite3_close(db);
    if (version == -SQLITE_NOTADB || version == -SQLITE_ERROR || version == 0) break;  // read, and not a store
    // Else the WAL could not be read (no -shm on a read-only file system): read the file alone.
  }
  throw StoreInputError(path + " is not a hangbench store (" + (error.empty() ? "no schema version" : error) + ")");
}

// Stores made before `run --shard` and per-trial hosts lack these columns; older
// hangbench versions ignore them, so the schema version stays.
void Store::add_missing_columns() {
  auto has_column = [&](const char* table, const std::string& column) {
    Statement s(db_, (std::string("PRAGMA table_info(") + table + ")").c_str());
    while (s.step()) {
      if (s.text(1) == column) return true;
    }
    return false;
  };
  if (!has_column("runs", "shard")) exec("ALTER TABLE runs ADD COLUMN shard TEXT;");
  if (!has_column("trials", "host")) exec("ALTER TABLE trials ADD COLUMN host TEXT;");
}

void Store::begin_run(const std::string& run_id, const Matrix& matrix, const Provenance& provenance,
                      const std::optional<Shard>& shard) {
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "INSERT INTO runs(id, matrix_json, provenance_json, started_at, status, shard) "
              "VALUES (?,?,?,?, 'running', ?)");
  s.bind(1, run_id).bind(2, nlohmann::json(matrix).dump()).bind(3, nlohmann::json(provenance).dump());
  s.bind(4, provenance.started_at.empty() ? utc_now_iso8601() : provenance.started_at);
  if (shard) s.bind(5, to_string(*shard));
  s.step();
}

void Store::record_trial(const std::string& run_id, const TrialResult& t) {
  std::lock_guard lock(*mutex_);
  insert_trial(run_id, t);  // autocommit: one transaction per row
}

void Store::record_trials(const std::string& run_id, const std::vector<TrialResult>& trials) {
  std::lock_guard lock(*mutex_);
  exec("BEGIN IMMEDIATE;");
  try {
    for (const auto& t : trials) insert_trial(run_id, t);
  } catch (...) {
    exec("ROLLBACK;");
    throw;
  }
  exec("COMMIT;");
}

void Store::insert_trial(const std::string& run_id, const TrialResult& t) {
  Statement s(db_,
              "INSERT OR REPLACE INTO trials(run_id, cell_id, idx, outcome, exit_code, signal, started_at, wall_s, "
              "hung_phase, phases_json, metrics_json, evidence_dir, evidence_summary, survivors_json, infra_error, "
              "host) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  // The *_json columns are the model's JSON forms of those fields (metrics: the
  // workload's with the harness's facts), as from_json reads them back below.
  s.bind(1, run_id).bind(2, t.cell_id).bind(3, t.index).bind(4, to_string(t.outcome)).bind(5, t.exit_code);
  s.bind(6, t.signal).bind(7, t.started_at).bind(8, t.wall_s).bind(9, t.hung_phase);
  s.bind(10, nlohmann::json(t.phases).dump()).bind(11, metrics_json(t).dump()).bind(12, t.evidence_dir);
  s.bind(13, t.evidence_summary).bind(14, nlohmann::json(t.survivors).dump()).bind(15, t.infra_error);
  s.bind(16, t.host);
  s.step();
}

void Store::finish_run(const std::string& run_id, const std::string& status) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
  s.bind(1, status).bind(2, utc_now_iso8601()).bind(3, run_id);
  s.step();
}

void Store::set_status(const std::string& run_id, const std::string& status) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?");
  s.bind(1, status).bind(2, run_id);
  s.step();
}

StoredRun Store::load_run(const std::string& run_id) const {
  std::lock_guard lock(*mutex_);
  StoredRun run;
  {
    Statement s(db_,
                "SELECT id, matrix_json, provenance_json, started_at, finished_at, status, shard "
                "FROM runs WHERE id = ?");
    s.bind(1, run_id);
    if (!s.step()) throw StoreError("no run '" + run_id + "' in " + path_);
    run.info = {s.text(0), s.text(3), s.text(4), s.text(5), 0, std::nullopt, ""};
    if (!s.text(6).empty()) {
      try {
        run.info.shard = parse_shard(s.text(6));
      } catch (const std::exception&) {
        throw StoreError("run '" + run_id + "' in " + path_ + " has an unreadable shard '" + s.text(6) + "'");
      }
    }
    try {
      run.matrix = nlohmann::json::parse(s.text(1)).get<Matrix>();
      run.info.matrix = run.matrix.name;
      run.provenance = nlohmann::json::parse(s.text(2)).get<Provenance>();
    } catch (const std::exception& e) {
      throw StoreError("run '" + run_id + "' in " + path_ + " has unreadable matrix/provenance: " + e.what());
    }
  }
  std::map<std::string, size_t> cell_order;
  for (size_t i = 0; i < run.matrix.cells.size(); ++i) cell_order[run.matrix.cells[i].id] = i;
  Statement s(db_,
              "SELECT cell_id, idx, outcome, exit_code, signal, started_at, wall_s, hung_phase, phases_json, "
              "metrics_json, evidence_dir, evidence_summary, survivors_json, infra_error, host "
              "FROM trials WHERE run_id = ?");
  s.bind(1, run_id);
  while (s.step()) {
    // Column by column; the JSON columns through the model's readers of those fields.
    TrialResult t;
    t.cell_id = s.text(0);
    t.index = s.integer(1);
    t.outcome = outcome_from_string(s.text(2)).value_or(Outcome::Infra);
    t.exit_code = s.integer(3);
    t.signal = s.integer(4);
    t.started_at = s.real(5);
    t.wall_s = s.real(6);
    t.hung_phase = s.text(7);
    t.phases = parse_json_or(s.text(8), nlohmann::json::array()).get<std::vector<PhaseEvent>>();
    read_metrics_json(parse_json_or(s.text(9), nlohmann::json::object()), t);
    t.evidence_dir = s.text(10);
    t.evidence_summary = s.text(11);
    t.survivors = parse_json_or(s.text(12), nlohmann::json::array()).get<std::vector<int>>();
    t.infra_error = s.text(13);
    t.host = s.text(14);
    if (auto problem = t.evidence_dir.empty() ? "" : path_escape_problem(t.evidence_dir); !problem.empty()) {
      throw StoreInputError("run '" + run_id + "' in " + path_ + ": trial " + t.cell_id + " #" +
                            std::to_string(t.index) + " names its evidence folder '" + t.evidence_dir + "', which " +
                            problem + " (a store's paths stay inside its folder)");
    }
    run.trials.push_back(std::move(t));
  }
  std::stable_sort(run.trials.begin(), run.trials.end(), [&](const TrialResult& a, const TrialResult& b) {
    auto oa = cell_order.count(a.cell_id) ? cell_order[a.cell_id] : cell_order.size();
    auto ob = cell_order.count(b.cell_id) ? cell_order[b.cell_id] : cell_order.size();
    return oa != ob ? oa < ob : (a.cell_id != b.cell_id ? a.cell_id < b.cell_id : a.index < b.index);
  });
  run.info.trials = static_cast<int>(run.trials.size());
  return run;
}

std::vector<RunInfo> Store::list_runs() const {
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "SELECT r.id, r.started_at, r.finished_at, r.status, "
              "(SELECT COUNT(*) FROM trials t WHERE t.run_id = r.id), "
              "r.shard, json_extract(r.matrix_json, '$.name') FROM runs r ORDER BY r.started_at, r.rowid");
  std::vector<RunInfo> out;
  while (s.step()) {
    out.push_back({s.text(0), s.text(1), s.text(2), s.text(3), s.integer(4), std::nullopt, s.text(6)});
    if (!s.text(5).empty()) out.back().shard = parse_shard(s.text(5));
  }
  return out;
}

std::set<std::pair<std::string, int>> Store::completed_keys(const std::string& run_id) const {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "SELECT cell_id, idx FROM trials WHERE run_id = ?");
  s.bind(1, run_id);
  std::set<std::pair<std::string, int>> out;
  while (s.step()) out.emplace(s.text(0), s.integer(1));
  return out;
}

std::optional<std::string> Store::latest_unfinished_run() const {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "SELECT id FROM runs WHERE status != 'complete' ORDER BY started_at DESC, rowid DESC LIMIT 1");
  if (s.step()) return s.text(0);
  return std::nullopt;
}

std::optional<std::string> Store::latest_run() const {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1");
  if (s.step()) return s.text(0);
  return std::nullopt;
}

}  // namespace hangbench
