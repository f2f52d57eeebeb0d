// SPDX-License-Identifier: Apache-2.0
// `indexsim sweep`: a design-space sweep into a results database; `indexsim merge`: shard databases
// (one per Dask worker) into one.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "sim/cli/cli.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/version.hpp"
#include "sim/store/store.hpp"
#include "sim/sweep/runner.hpp"

namespace indexsim::cli {

namespace {

// Distinct from 1 (an error of the sweep itself) and 2 (bad arguments or config).
constexpr int kSomeRunsFailed = 3;

const char* kSweepFooter =
    "Runs already in the database with status ok are skipped, so a killed sweep resumes.\n"
    "Exit status 3: the sweep completed, but some runs failed (stored with status failed and their error).";

std::vector<size_t> parse_indices(const std::string& text) {
  std::vector<size_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("--select: '" + item + "' is not an index");
    out.push_back(std::stoul(item));
  }
  return out;
}

int sweep_cmd(const Args& args) {
  Cli ap("sweep", "A design-space sweep: every point of a spec's axes, one run each, into a results database.",
         kSweepFooter);
  ap.positionals("spec", "the sweep spec, a YAML file (configs/sweeps/)")
      .option("--db FILE", "the results database (required unless --dry-run)")
      .option("--workers N", "runs in parallel, one process each (default: the number of CPUs)")
      .option("--limit N", "run at most N of the pending runs, then stop")
      .flag("--dry-run", "list the runs (index, key, point, done) without running")
      .flag("--json", "with --dry-run: as JSON")
      .option("--select I,J,...", "only the points at these indices of the spec's product (Dask workers use it)")
      .flag("--rerun-stale", "re-run the stored runs of another code version (default: keep them, and say how many)")
      .flag("--quiet", "no progress line");
  if (!ap.parse(args)) return 0;
  sim::sweep::SweepOptions o;
  o.db = ap.value("--db");
  o.workers = ap.u32("--workers", std::max(1u, std::thread::hardware_concurrency()));
  o.limit = ap.u64("--limit", 0);
  const bool dry = ap.has("--dry-run");
  const bool json = ap.has("--json");
  o.progress = !ap.has("--quiet");
  const std::string select = ap.value("--select");
  const bool rerun_stale = ap.has("--rerun-stale");
  const auto& pos = ap.positional();
  if (pos.size() != 1) throw std::invalid_argument("give one sweep spec (indexsim sweep --help)");
  if (o.db.empty() && !dry) throw std::invalid_argument("--db is required (indexsim sweep --help)");

  const auto spec = sim::sweep::SweepSpec::load_file(pos[0]);
  const auto runs = sim::sweep::plan(spec, o.db, select.empty() ? std::vector<size_t>{} : parse_indices(select), rerun_stale,
                                     o.progress);
  if (dry) {
    if (json) {
      nlohmann::json j = {{"name", spec.name}, {"runs", nlohmann::json::array()}};
      for (const auto& r : runs) j["runs"].push_back(r.to_json(spec));
      std::cout << j.dump(2) << "\n";
    } else {
      size_t done = 0;
      for (const auto& r : runs) {
        done += r.done;
        std::cout << r.index << "  " << r.key << "  " << (r.done ? (r.stale ? "stale  " : "done   ") : "pending") << " ";
        for (const auto& [p, v] : r.point) std::cout << " " << p << "=" << v;
        std::cout << "\n";
      }
      std::cout << runs.size() << " runs, " << done << " done, " << runs.size() - done << " pending\n";
    }
    return 0;
  }
  const auto sum = sim::sweep::run(spec, runs, o, std::cerr);
  std::cout << "sweep " << spec.name << ": " << sum.total << " runs, " << sum.skipped << " already stored, " << sum.ran
            << " ran (" << sum.ok << " ok, " << sum.failed << " failed) in " << sum.wall_s << " s\n";
  if (sum.elsewhere)
    std::cout << "  " << sum.elsewhere << " left to another sweep running on " << o.db << " (it claimed or stored them)\n";
  if (sum.stale)
    std::cout << "  " << sum.stale << " stored runs are of another code version than " << sim::code_version() << ": "
              << (rerun_stale ? "re-run" : "kept (--rerun-stale re-runs them)") << "\n";
  return sum.failed ? kSomeRunsFailed : 0;
}

int merge_cmd(const Args& args) {
  Cli ap("merge", "Copies every run of the shards that INTO lacks (an ok run replaces a failed one).");
  ap.positionals("databases", "INTO.sqlite, then the SHARD.sqlite files whose runs it takes");
  if (!ap.parse(args)) return 0;
  const auto& pos = ap.positional();
  if (pos.size() < 2) throw std::invalid_argument("usage: indexsim merge INTO.sqlite SHARD.sqlite...");
  // Every shard must exist and be another file than INTO: merging a database into itself waited on
  // its own lock; a missing shard was created empty and reported as merged.
  namespace fs = std::filesystem;
  for (size_t i = 1; i < pos.size(); ++i) {
    std::error_code ec;
    if (!fs::is_regular_file(pos[i], ec))
      throw std::invalid_argument("merge: shard " + pos[i] + " is not a results database (no such file)");
    if (fs::exists(pos[0], ec) && fs::equivalent(pos[0], pos[i], ec))
      throw std::invalid_argument("merge: shard " + pos[i] + " is " + pos[0] + " itself");
  }
  // Every shard is checked before any is merged (Store::merge): a bad one after good ones used to
  // leave INTO half-merged.
  for (size_t i = 1; i < pos.size(); ++i) sim::Store::check_shard(pos[i]);  // before INTO is opened (created)
  sim::Store into(pos[0]);
  const size_t added = into.merge({pos.begin() + 1, pos.end()});
  std::cout << "merged " << pos.size() - 1 << " shard(s) into " << pos[0] << ": " << added << " new run(s), "
            << into.keys().size() << " in all\n";
  return 0;
}

}  // namespace

INDEXSIM_COMMAND("sweep", "run a design-space sweep (spec YAML) into a results database, resumably", sweep_cmd);
INDEXSIM_COMMAND("merge", "merge shard results databases into one without duplicates", merge_cmd);

}  // namespace indexsim::cli
