// SPDX-License-Identifier: Apache-2.0
// What one simulation run produces: the unit the results store writes and Python reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/stats.hpp"

namespace indexsim::sim {

struct KernelResult {
  uint32_t id = 0;
  std::string name, kind;
  int32_t layer = -1;
  uint32_t stream = 0;
  double start_ns = 0, end_ns = 0;
  uint64_t bytes_read = 0, bytes_written = 0;  // as issued to the memory system (sector-rounded)
  double flops = 0;
  double roofline_ns = 0;     // max(bytes_r / peak_bw_r over regions, Σ flops_p / peak_p)
  std::string bound;          // "memory" or "compute": which term of the roofline is larger
  double measured_ns = 0;     // captured traces only
  uint64_t ctas = 0;
  int ctas_per_sm = 0;
  // How the kernel was simulated: "all" CTAs; "sampled" (fast mode: the first waves, the rest
  // extrapolated at their rate); "steady" (fast mode: every CTA, but the lines left once its rate was
  // steady warmed and projected at that rate); "reused" (fast mode: the duration of an identical
  // earlier kernel).
  std::string simulated = "all";
  std::string processor = "SM";  // what the units it ran on are called (Processor::unit_name)
  // Host seconds the simulator spent on it (0 when reused): where a run's wall time goes. Kernels
  // that overlap share host time. In the JSON and the --kernels table, not in the store (it is not
  // part of what a run computes).
  double wall_s = 0;
  double duration_ns() const { return end_ns - start_ns; }
};

struct Metric {
  std::string name;
  double value;
  std::string unit;
};

// The key a run is stored under: the stable hash of its resolved configuration, less the path of a
// trace whose content hash the configuration holds (the same trace anywhere is the same run).
std::string run_key(const nlohmann::json& config);

// The time in which some communication kernel (a collective, a dispatch or combine) runs and no
// other kernel does: the communication a step waits for, with what overlaps it (two-batch overlap,
// a prefetch on another stream) taken out. Measure of U_comm minus that of U_comm ∩ U_other, U the
// union of the kernels' [start, end) intervals.
double exposed_communication_ns(const std::vector<KernelResult>& kernels);

struct RunResult {
  std::string key;                 // stable hash of `config`
  nlohmann::json config;           // the fully resolved configuration (hardware, workload, techniques, step)
  std::string hardware, workload;
  nlohmann::json techniques = nlohmann::json::object();
  uint64_t seed = 0;
  std::string code_version;
  std::string status = "ok";       // ok | failed
  std::string error;
  double wall_s = 0;
  double step_ns = 0;
  double roofline_ns = 0;          // critical-path lower bound: no kernel may beat its roofline
  std::vector<KernelResult> kernels;
  std::vector<Metric> metrics;
  model::StatSink components;
  // What the run could not do as configured and did otherwise (a pin that did not fit): printed by
  // the commands, stored with the result.
  std::vector<std::string> warnings;

  void metric(const std::string& name, double value, const std::string& unit) {
    metrics.push_back({name, value, unit});
  }
  double get_metric(const std::string& name, double fallback = -1) const {
    for (const auto& m : metrics)
      if (m.name == name) return m.value;
    return fallback;
  }
  nlohmann::json to_json(bool with_kernels = true) const;
};

}  // namespace indexsim::sim
