// SPDX-License-Identifier: Apache-2.0
// The results store: a run's rows replace its earlier ones, has_ok() sees only complete ok runs, and
// merging shards never duplicates a key (an ok run replaces a failed one, never the reverse).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "sim/core/version.hpp"
#include "sim/store/store.hpp"

using indexsim::sim::RunResult;
using indexsim::sim::Store;

namespace {

std::string temp_db(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("indexsim-store-" + std::to_string(getpid()) + "-" + name);
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + ext);
  return p.string();
}

RunResult make(const std::string& key, const std::string& status, int n_metrics) {
  RunResult r;
  r.key = key;
  r.config = {{"key", key}};
  r.status = status;
  if (status != "ok") r.error = "boom";
  for (int i = 0; i < n_metrics; ++i) r.metric("m" + std::to_string(i), i, "count");
  return r;
}

int64_t count(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr);
  int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(h);
  return v;
}

}  // namespace

TEST(Store, PutReplacesEveryRowOfTheSameKey) {
  const auto db = temp_db("replace.sqlite");
  {
    Store s(db);
    s.put(make("a", "ok", 3));
    s.put(make("a", "ok", 2));  // 2 metrics now, not 3 + 2
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM metrics WHERE run='a'"), 2);
}

TEST(Store, FailedRunIsStoredButNotOk) {
  const auto db = temp_db("failed.sqlite");
  Store s(db);
  s.put(make("f", "failed", 0));
  EXPECT_FALSE(s.has_ok("f"));
  EXPECT_EQ(s.keys("failed"), std::vector<std::string>{"f"});
  s.put(make("f", "ok", 1));
  EXPECT_TRUE(s.has_ok("f"));
}

TEST(Store, MergeCopiesMissingRunsOnceAndOkReplacesFailed) {
  // main: a(ok), b(failed); shard: a(ok), b(ok), c(ok) → main: a, b(ok), c; 2 new or replaced.
  const auto main_db = temp_db("main.sqlite"), shard = temp_db("shard.sqlite");
  {
    Store m(main_db);
    m.put(make("a", "ok", 1));
    m.put(make("b", "failed", 0));
    Store s(shard);
    s.put(make("a", "ok", 1));
    s.put(make("b", "ok", 2));
    s.put(make("c", "ok", 2));
  }
  Store m(main_db);
  m.merge_from(shard);
  m.merge_from(shard);  // idempotent
  EXPECT_EQ(m.keys(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(m.has_ok("b"));
  EXPECT_EQ(count(main_db, "SELECT COUNT(*) FROM metrics"), 1 + 2 + 2);
}

TEST(Store, AClaimHoldsWhileItsSweepLivesAndGoesWhenItEnds) {
  const auto db = temp_db("claims.sqlite");
  Store st(db);
  EXPECT_TRUE(st.claim("k1"));
  EXPECT_TRUE(st.claim("k1"));  // this process's own
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // Another live sweep's claim (pid 1 always exists) is left alone; a dead one's is taken over.
  st.exec("INSERT INTO claims VALUES ('k2', '" + std::string(host) + "', 1, strftime('%s','now'))");
  EXPECT_FALSE(st.claim("k2"));
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  st.exec("INSERT INTO claims VALUES ('k3', '" + std::string(host) + "', " + std::to_string(child) + ", strftime('%s','now'))");
  EXPECT_TRUE(st.claim("k3"));
  // A claim from another host holds until it is a day old.
  st.exec("INSERT INTO claims VALUES ('k4', 'elsewhere', 7, strftime('%s','now'))");
  EXPECT_FALSE(st.claim("k4"));
  st.exec("INSERT INTO claims VALUES ('k5', 'elsewhere', 7, strftime('%s','now') - 90000)");
  EXPECT_TRUE(st.claim("k5"));
  // A key this build stored ok is nobody's to run; one of another build's may be run again.
  RunResult done = make("k6", "ok", 1);
  done.code_version = indexsim::sim::code_version();
  st.put(done);
  EXPECT_FALSE(st.claim("k6"));
  st.put(make("k7", "ok", 1));  // no code version: another build's
  EXPECT_TRUE(st.claim("k7"));
  st.release("k7");
  st.release("k1");
  st.release("k3");
  st.release("k5");
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM claims WHERE pid=" + std::to_string(getpid())), 0);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM claims"), 2);  // the others' stay
}
