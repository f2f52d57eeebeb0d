// SPDX-License-Identifier: Apache-2.0
#include "sim/store/store.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <ctime>
#include <stdexcept>

#include "sim/core/version.hpp"

namespace indexsim::sim {

namespace {
const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  key TEXT PRIMARY KEY, config TEXT NOT NULL, hardware TEXT, workload TEXT, techniques TEXT,
  seed INTEGER, code_version TEXT, wall_s REAL, status TEXT NOT NULL, error TEXT,
  step_ns REAL, roofline_ns REAL, created_at TEXT);
CREATE TABLE IF NOT EXISTS metrics (
  run TEXT NOT NULL REFERENCES runs(key), name TEXT NOT NULL, value REAL, unit TEXT,
  PRIMARY KEY (run, name));
CREATE TABLE IF NOT EXISTS kernels (
  run TEXT NOT NULL REFERENCES runs(key), id INTEGER NOT NULL, layer INTEGER, name TEXT, kind TEXT,
  stream INTEGER, start_ns REAL, end_ns REAL, bytes_read INTEGER, bytes_written INTEGER, flops REAL,
  roofline_ns REAL, bound TEXT, measured_ns REAL, PRIMARY KEY (run, id));
CREATE TABLE IF NOT EXISTS components (
  run TEXT NOT NULL REFERENCES runs(key), unit TEXT NOT NULL, statistic TEXT NOT NULL, value REAL,
  unit_of_measure TEXT, PRIMARY KEY (run, unit, statistic));
CREATE TABLE IF NOT EXISTS claims (
  key TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, claimed_at INTEGER NOT NULL);
)";

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("sqlite prepare: ") + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& bind_int(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("sqlite step: ") + sqlite3_errmsg(db_));
    return false;
  }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }
  std::string text(int c) const {
    auto p = sqlite3_column_text(s_, c);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};
}  // namespace

namespace {
constexpr int kOpenRetryMs = 50, kOpenAttempts = 1200;  // 60 s in all

// The schema version a results database states, checked against this build's; nothing when the
// file holds no table at all (a new or empty file). A file with tables but no `meta` is another
// application's database and is refused, not given our tables.
void check_results_schema(sqlite3* db, const std::string& path) {
  Stmt tables(db, "SELECT COUNT(*), SUM(name='meta') FROM sqlite_master WHERE type='table'");
  tables.step();
  if (tables.integer(0) == 0) return;
  if (tables.integer(1) == 0)
    throw std::runtime_error("results database " + path + ": not an IndexSim results database (it holds tables and no meta table)");
  Stmt q(db, "SELECT value FROM meta WHERE key='schema_version'");
  if (!q.step()) return;
  const std::string text = q.text(0);
  int v = -1;
  try {
    size_t used = 0;
    v = std::stoi(text, &used);
    if (used != text.size()) v = -1;
  } catch (...) {
    v = -1;
  }
  if (v < 0) throw std::runtime_error("results database " + path + ": schema_version '" + text + "' is not a number");
  if (v != kSchemaVersion)
    throw std::runtime_error("results database " + path + " has schema version " + std::to_string(v) +
                             "; this build reads version " + std::to_string(kSchemaVersion));
}

}  // namespace

Store::Store(const std::string& path) : path_(path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);   // sqlite3_open allocates the handle even when it fails
    db_ = nullptr;
    throw std::runtime_error("cannot open results database " + path + ": " + why);
  }
  sqlite3_busy_timeout(db_, kOpenAttempts * kOpenRetryMs);  // sweep workers share the file: wait for each other's transactions
  bool in_transaction = false;
  try {
    // Not a database, truncated, read-only, another schema or another application's: these fail
    // here, before anything is written (the transaction is rolled back), and the handle must not
    // leak. Only then is the schema created and the file switched to WAL.
    exec("BEGIN IMMEDIATE;");
    in_transaction = true;
    check_results_schema(db_, path);
    exec(kSchema);
    Stmt q(db_, "SELECT value FROM meta WHERE key='schema_version'");
    if (!q.step()) {
      exec("INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "')");
      exec("INSERT INTO meta VALUES ('created_by', 'indexsim')");
    }
    exec("COMMIT;");
    in_transaction = false;
    // Switching a file to WAL needs it alone for a moment, and there SQLite answers SQLITE_BUSY at
    // once instead of calling the busy handler: two sweeps creating one file together failed 13
    // times in 20 with "database is locked". Retry for as long as the busy timeout would wait.
    for (int attempt = 1;; ++attempt) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL;", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) break;
      if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || attempt == kOpenAttempts) {
        exec("PRAGMA journal_mode=WAL;");  // throws, naming the file and SQLite's reason
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kOpenRetryMs));
    }
    exec("PRAGMA synchronous=NORMAL;");
  } catch (...) {
    if (in_transaction) sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

void Store::check_shard(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  try {
    if (rc != SQLITE_OK) throw std::runtime_error("results database " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
    check_results_schema(db, path);
    Stmt runs(db, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN ('meta','runs','metrics','kernels','components')");
    runs.step();
    if (runs.integer(0) != 5) throw std::runtime_error("results database " + path + ": not an IndexSim results database (its tables are missing)");
  } catch (const std::runtime_error& e) {
    sqlite3_close(db);
    const std::string m = e.what();
    // A file that is not SQLite at all fails in the first statement, in SQLite's words.
    if (m.rfind("results database", 0) == 0) throw;
    throw std::runtime_error("results database " + path + ": " + m);
  }
  sqlite3_close(db);
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown";
    sqlite3_free(err);
    throw std::runtime_error("results database " + path_ + ": " + msg);
  }
}

void Store::put(const RunResult& r) {
  exec("BEGIN IMMEDIATE;");
  try {
    for (const char* t : {"metrics", "kernels", "components"}) {
      Stmt d(db_, (std::string("DELETE FROM ") + t + " WHERE run=?").c_str());
      d.bind(1, r.key).step();
    }
    {
      Stmt d(db_, "DELETE FROM runs WHERE key=?");
      d.bind(1, r.key).step();
    }
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    Stmt ins(db_, "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, r.key).bind(2, r.config.dump()).bind(3, r.hardware).bind(4, r.workload).bind(5, r.techniques.dump());
    ins.bind_int(6, int64_t(r.seed)).bind(7, r.code_version).bind(8, r.wall_s).bind(9, r.status).bind(10, r.error);
    ins.bind(11, r.step_ns).bind(12, r.roofline_ns).bind(13, std::string(when));
    ins.step();
    Stmt m(db_, "INSERT INTO metrics VALUES (?,?,?,?)");
    for (const auto& x : r.metrics) {
      m.bind(1, r.key).bind(2, x.name).bind(3, x.value).bind(4, x.unit);
      m.step();
      m.reset();
    }
    Stmt k(db_, "INSERT INTO kernels VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& x : r.kernels) {
      k.bind(1, r.key).bind_int(2, x.id).bind_int(3, x.layer).bind(4, x.name).bind(5, x.kind).bind_int(6, x.stream);
      k.bind(7, x.start_ns).bind(8, x.end_ns).bind_int(9, int64_t(x.bytes_read)).bind_int(10, int64_t(x.bytes_written));
      k.bind(11, x.flops).bind(12, x.roofline_ns).bind(13, x.bound).bind(14, x.measured_ns);
      k.step();
      k.reset();
    }
    Stmt c(db_, "INSERT OR REPLACE INTO components VALUES (?,?,?,?,?)");
    for (const auto& x : r.components.rows()) {
      c.bind(1, r.key).bind(2, x.unit_name).bind(3, x.statistic).bind(4, x.value).bind(5, x.unit);
      c.step();
      c.reset();
    }
    exec("COMMIT;");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
}

namespace {
std::string this_host() {
  char h[256] = {};
  if (gethostname(h, sizeof h - 1) != 0) return "?";
  return h;
}
}  // namespace

bool Store::claim(const std::string& key, int64_t stale_after_s) {
  // One transaction: two sweeps asking at once see each other's claim.
  exec("BEGIN IMMEDIATE;");
  try {
    // Stored by this build: done (a stale run of another build may be run again).
    bool mine = stored(key) != Stored::current;
    if (mine) {
      Stmt q(db_, "SELECT host, pid, claimed_at FROM claims WHERE key=?");
      q.bind(1, key);
      if (q.step()) {
        const std::string host = q.text(0);
        const auto pid = pid_t(q.integer(1));
        const int64_t age = int64_t(std::time(nullptr)) - q.integer(2);
        const bool self = host == this_host() && pid == getpid();
        // A claim holds while its sweep lives: on this host, while the process exists; from
        // another host (a shared file system), for stale_after_s.
        const bool alive = host == this_host() ? (kill(pid, 0) == 0 || errno == EPERM) : age < stale_after_s;
        mine = self || !alive;
      }
    }
    if (mine) {
      Stmt w(db_, "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)");
      w.bind(1, key).bind(2, this_host()).bind_int(3, getpid()).bind_int(4, int64_t(std::time(nullptr)));
      w.step();
    }
    exec("COMMIT;");
    return mine;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
}

void Store::release(const std::string& key) {
  Stmt q(db_, "DELETE FROM claims WHERE key=? AND host=? AND pid=?");
  q.bind(1, key).bind(2, this_host()).bind_int(3, getpid());
  q.step();
}

bool Store::has_ok(const std::string& key) const {
  Stmt q(db_, "SELECT 1 FROM runs WHERE key=? AND status='ok'");
  q.bind(1, key);
  return q.step();
}

std::optional<std::string> Store::ok_version(const std::string& key) const {
  Stmt q(db_, "SELECT code_version FROM runs WHERE key=? AND status='ok'");
  q.bind(1, key);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

Stored Store::stored(const std::string& key) const {
  const auto v = ok_version(key);
  return !v ? Stored::absent : *v == code_version() ? Stored::current : Stored::stale;
}

std::optional<RunResult> Store::get(const std::string& key) const {
  Stmt q(db_, "SELECT config, hardware, workload, techniques, seed, code_version, wall_s, step_ns, roofline_ns "
              "FROM runs WHERE key=? AND status='ok'");
  q.bind(1, key);
  if (!q.step()) return std::nullopt;
  RunResult r;
  r.key = key;
  try {
    r.config = nlohmann::json::parse(q.text(0));
    r.techniques = nlohmann::json::parse(q.text(3));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("results database " + path_ + ": run " + key + " has a corrupt config or techniques column: " + e.what());
  }
  r.hardware = q.text(1);
  r.workload = q.text(2);
  r.seed = uint64_t(q.integer(4));
  r.code_version = q.text(5);
  r.wall_s = q.real(6);
  r.step_ns = q.real(7);
  r.roofline_ns = q.real(8);
  if (r.techniques.is_object() && r.techniques.contains("warnings"))
    for (const auto& w : r.techniques["warnings"]) r.warnings.push_back(w.get<std::string>());
  Stmt m(db_, "SELECT name, value, unit FROM metrics WHERE run=? ORDER BY rowid");
  m.bind(1, key);
  while (m.step()) r.metric(m.text(0), m.real(1), m.text(2));
  return r;
}

std::vector<std::string> Store::keys(const std::string& status) const {
  Stmt q(db_, status.empty() ? "SELECT key FROM runs ORDER BY key" : "SELECT key FROM runs WHERE status=? ORDER BY key");
  if (!status.empty()) q.bind(1, status);
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  return out;
}

size_t Store::merge(const std::vector<std::string>& shards) {
  for (const auto& s : shards) check_shard(s);  // read-only: a shard is never written
  const size_t before = keys().size();
  for (const auto& s : shards) merge_one(s);
  return keys().size() - before;
}

void Store::merge_one(const std::string& other) {
  Stmt a(db_, "ATTACH DATABASE ? AS shard");
  a.bind(1, other).step();
  try {
    exec("BEGIN IMMEDIATE;");
    // A run already here with status ok wins, unless it is stale and the shard's is of this build
    // (a sweep that re-ran stale runs on workers); a failed one is replaced by the shard's ok one.
    std::string version = code_version();
    for (size_t i = version.find('\''); i != std::string::npos; i = version.find('\'', i + 2)) version.insert(i, "'");
    const std::string replaced = "(SELECT r.key FROM runs r JOIN shard.runs s ON r.key=s.key WHERE s.status='ok' AND (r.status!='ok' OR "
                                 "(r.code_version IS NOT '" + version + "' AND s.code_version = '" + version + "')))";
    for (const char* t : {"metrics", "kernels", "components"}) exec(std::string("DELETE FROM ") + t + " WHERE run IN " + replaced + ";");
    exec("DELETE FROM runs WHERE key IN " + replaced + ";");
    exec("INSERT INTO runs SELECT * FROM shard.runs WHERE key NOT IN (SELECT key FROM runs);");
    exec("INSERT OR IGNORE INTO metrics SELECT * FROM shard.metrics;");
    exec("INSERT OR IGNORE INTO kernels SELECT * FROM shard.kernels;");
    exec("INSERT OR IGNORE INTO components SELECT * FROM shard.components;");
    exec("COMMIT;");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    exec("DETACH DATABASE shard;");
    throw;
  }
  exec("DETACH DATABASE shard;");
}

}  // namespace indexsim::sim
