// SPDX-License-Identifier: Apache-2.0
// The results store: one SQLite file per study. A run is keyed by the hash of its resolved
// configuration and written in one transaction, so a run is either wholly there or absent, and a
// sweep that is killed resumes by skipping the keys already stored with status 'ok'.
// Schema (version 1; see docs/results-schema.md):
//   meta(key, value)                       schema_version, created_by
//   runs(key, config, hardware, workload, techniques, seed, code_version, wall_s, status, error,
//        step_ns, roofline_ns, created_at)
//   metrics(run, name, value, unit)
//   kernels(run, id, layer, name, kind, stream, start_ns, end_ns, bytes_read, bytes_written, flops,
//           roofline_ns, bound, measured_ns)
//   components(run, unit, statistic, value, unit_of_measure)
//   claims(key, host, pid, claimed_at)      runs a sweep is simulating now (sweeps sharing the file)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/engine/run_result.hpp"

struct sqlite3;

namespace indexsim::sim {

constexpr int kSchemaVersion = 1;

// What the store holds for a run key, against this build: nothing (or a failed run), a successful
// run of this code version, or one of another version (stale: the model may have moved since).
enum class Stored { absent, current, stale };

class Store {
 public:
  explicit Store(const std::string& path);  // creates or opens; checks the schema version
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  void put(const RunResult& r);                       // replaces any earlier row set of r.key
  bool has_ok(const std::string& key) const;          // a complete, successful run is stored
  // The code version of the successful run stored under `key`, or nullopt when there is none: a
  // run of another version than this build's is stale (see Reuse).
  std::optional<std::string> ok_version(const std::string& key) const;
  Stored stored(const std::string& key) const;       // ok_version against code_version()
  // The successful run stored under `key`, without its kernels and components (what a table row
  // needs: config, step, roofline, metrics, warnings), or nullopt.
  std::optional<RunResult> get(const std::string& key) const;
  std::vector<std::string> keys(const std::string& status = "") const;
  // Sweeps sharing one file: claims `key` for this process unless this build stored it, or another
  // live sweep holds it (on this host: its process exists; on another: claimed under
  // stale_after_s ago). A dead sweep's claim is taken over. release() gives this process's back.
  bool claim(const std::string& key, int64_t stale_after_s = 24 * 3600);
  void release(const std::string& key);
  // Copies every run of the shards that this store lacks; returns how many. Every shard is checked
  // (check_shard) before any is merged, so a bad one leaves this store as it was.
  size_t merge(const std::vector<std::string>& shard_paths);
  size_t merge_from(const std::string& other_path) { return merge({other_path}); }
  // A shard must be a results database of this schema version; checked read-only, so that a
  // refused file is left as it was. std::runtime_error naming the file otherwise.
  static void check_shard(const std::string& path);
  void exec(const std::string& sql);

 private:
  void merge_one(const std::string& other_path);  // a checked shard, in one transaction
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace indexsim::sim
