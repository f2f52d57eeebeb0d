// SPDX-License-Identifier: Apache-2.0
// `indexsim validate --published`: every case of a validation file (configs/validation/), a kernel
// on a hardware preset with a figure that someone measured on the real part, simulated and compared.
// A case names its source and the conditions the source states; the figure is a check, never an
// input to any model parameter.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/validation/kernel_bench.hpp"

namespace indexsim::sim {

// The measurement loop of a source, where its host side bounds the figure: nccl-tests run as one
// process and one thread driving every GPU (-g N) enqueues each call GPU by GPU and launches N
// kernels an iteration, so an iteration takes at least N times the host's cost for one GPU, however
// fast the GPUs are. The time a case reports is then max(simulated kernel, N x host_us_per_gpu).
// The host cost is a property of the host and the harness, stated with its own source.
struct Harness {
  std::string name;
  double host_us_per_gpu = 0;
  // Raises the kernel's time to the loop's, gpus x host_us_per_gpu; whether the loop set it.
  bool bound(KernelRun& k, uint32_t gpus) const {
    const double loop_ns = gpus * host_us_per_gpu * 1e3;
    if (loop_ns <= k.kernel_ns) return false;
    k.kernel_ns = loop_ns;
    return true;
  }
};

struct PublishedCase {
  std::string name, group, hardware, source, conditions;
  KernelCase kernel;
  std::vector<std::string> sets;  // hardware.K=V the source's conditions call for
  bool fast = true;
  double measured = 0;
  std::string unit;
  // Non-empty: why the figure measures something else than the simulated kernel (a harness that
  // batches many calls, a host-bound loop). The case runs and is shown, but stays out of the MAPE.
  std::string not_comparable;
  std::optional<Harness> harness;  // the source's loop bounds the figure from below (collectives)
};

struct CaseOutcome {
  std::string name, group, hardware, unit, source;
  double simulated = 0, measured = 0;
  double error = 0;       // (simulated - measured) / measured
  std::string failure;    // non-empty: the case could not run (one line naming the case and why)
  std::string not_comparable;  // non-empty: shown, but not in the MAPE (PublishedCase::not_comparable)
  double wall_s = 0;
  nlohmann::json launch;  // the launch shape the emulated kernel took
  std::string harness;    // the case's harness, if any
  double kernel_us = 0;   // the simulated kernel alone
  bool host_bound = false;  // the harness's host loop, not the kernel, set the figure
};

struct PublishedReport {
  std::string file;
  std::vector<CaseOutcome> cases;
  std::map<std::string, double> mape_by_group;
  double mape = 0, max_abs_error = 0;
  size_t failed = 0;
  size_t not_comparable = 0;  // cases shown but left out of the MAPE
  nlohmann::json to_json() const;
  std::string table() const;     // plain text, one line a case, then the MAPE per group
  std::string markdown() const;  // the same, as docs/validation.md shows it
};

// Reads every case of `file` (ConfigError naming the file and key on a bad one).
std::vector<PublishedCase> load_published_cases(const std::string& file);

// Runs the cases whose name is `only_case` (empty: all) and whose group is `only_group` (empty:
// all). A case that cannot run is reported in its outcome, not thrown; no case matching the filters
// is an std::invalid_argument. progress(i, n, name) as each case starts. `jobs` cases run at once,
// on as many threads; the report does not depend on it.
PublishedReport run_published(const std::string& file, const std::string& only_case, const std::string& only_group,
                              const std::function<void(size_t, size_t, const std::string&)>& progress = {},
                              unsigned jobs = 1);

}  // namespace indexsim::sim
