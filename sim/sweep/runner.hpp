// SPDX-License-Identifier: Apache-2.0
// Runs a sweep: resolves every point first (so a bad axis fails before any run starts), skips the
// points whose key the store already holds with status ok, and runs the rest in worker processes,
// one `indexsim run --db` process per run (SystemC elaborates once per process). A run commits in
// one transaction, so killing the sweep loses at most the runs in flight and a rerun completes the
// set. A run that fails is stored with status 'failed' and its error; the sweep goes on.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/spec.hpp"

namespace indexsim::sim::sweep {

struct PlannedRun {
  size_t index = 0;             // position in SweepSpec::points()
  Assignment point;
  RunSpec spec;
  std::string key;              // stable hash of the resolved config: the store's run key
  nlohmann::json config;
  bool done = false;            // stored with status ok (and of this code version, or kept though stale)
  bool stale = false;           // stored with status ok by another code version
  // share_segments: the position in the plan of the run whose segment memos this one starts from
  // (-1: none), and whether this run stores its memos for others (a seed with members planned).
  long seed = -1;
  bool keeps_segments = false;
  nlohmann::json to_json(const SweepSpec& s) const;  // index, key, point, args, done
};

// Resolves the points (all of them, or those at `select`), naming the axis and point on a config
// error; `db` (may be empty) marks the runs already done. A run stored by another code version is
// marked stale, and done unless `rerun_stale`.
// With `progress`, a progress line on stderr while the points resolve (a 390-point plan takes minutes).
// With the spec's share_segments, the seed of a selected point is planned too (after the selected
// ones), since the point's result depends on it.
std::vector<PlannedRun> plan(const SweepSpec& s, const std::string& db, const std::vector<size_t>& select = {},
                             bool rerun_stale = false, bool progress = false);

struct SweepOptions {
  std::string db;
  std::string executable;       // the indexsim binary the workers run
  unsigned workers = 1;
  size_t limit = 0;             // run at most this many pending runs (0: all)
  bool progress = true;         // the done/total, rate, ETA line on stderr
};

struct SweepSummary {
  size_t total = 0, skipped = 0, stale = 0, ran = 0, ok = 0, failed = 0;  // stale: among skipped, or re-run
  size_t elsewhere = 0;  // left to another sweep on the same file: it claimed them, or stored them since the plan
  double wall_s = 0;
};

SweepSummary run(const SweepSpec& s, const std::vector<PlannedRun>& runs, const SweepOptions& o, std::ostream& log);

// The path of the running executable (/proc/self/exe), for workers that re-run this binary.
std::string self_executable();

}  // namespace indexsim::sim::sweep
