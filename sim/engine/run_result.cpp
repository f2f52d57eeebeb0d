// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/run_result.hpp"

#include <algorithm>

#include "models/common/params.hpp"
#include "traces/kernel_kind.hpp"

namespace indexsim::sim {

namespace {

using Intervals = std::vector<std::pair<double, double>>;

// Sorted, disjoint intervals covering the same time as `iv`.
Intervals merged(Intervals iv) {
  std::sort(iv.begin(), iv.end());
  Intervals out;
  for (const auto& [a, b] : iv) {
    if (b <= a) continue;
    if (!out.empty() && a <= out.back().second) out.back().second = std::max(out.back().second, b);
    else out.emplace_back(a, b);
  }
  return out;
}

}  // namespace

double exposed_communication_ns(const std::vector<KernelResult>& kernels) {
  Intervals comm, other;
  for (const auto& k : kernels)
    (trace::is_communication(trace::kernel_kind(k.kind)) ? comm : other).emplace_back(k.start_ns, k.end_ns);
  comm = merged(std::move(comm));
  other = merged(std::move(other));
  double exposed = 0;
  size_t j = 0;
  for (const auto& [a, b] : comm) {
    double covered = 0;
    while (j < other.size() && other[j].second <= a) ++j;
    for (size_t i = j; i < other.size() && other[i].first < b; ++i)
      covered += std::min(b, other[i].second) - std::max(a, other[i].first);
    exposed += (b - a) - covered;
  }
  return exposed;
}

std::string run_key(const nlohmann::json& config) {
  const auto step = config.find("step");
  if (step == config.end() || !step->is_object() || !step->contains("trace_content_hash")) return config::stable_hash(config);
  nlohmann::json keyed = config;
  keyed["step"].erase("trace");
  return config::stable_hash(keyed);
}

nlohmann::json RunResult::to_json(bool with_kernels) const {
  nlohmann::json j;
  j["key"] = key;
  j["hardware"] = hardware;
  j["workload"] = workload;
  j["techniques"] = techniques;
  j["seed"] = seed;
  j["code_version"] = code_version;
  j["status"] = status;
  if (!error.empty()) j["error"] = error;
  j["wall_s"] = wall_s;
  j["step_ns"] = step_ns;
  j["roofline_ns"] = roofline_ns;
  j["config"] = config;
  auto& m = j["metrics"] = nlohmann::json::object();
  for (const auto& x : metrics) m[x.name] = {{"value", x.value}, {"unit", x.unit}};
  auto& c = j["components"] = nlohmann::json::array();
  for (const auto& r : components.rows())
    c.push_back({{"unit", r.unit_name}, {"statistic", r.statistic}, {"value", r.value}, {"unit_of_measure", r.unit},
                 {"description", r.description}});
  if (with_kernels) {
    auto& ks = j["kernels"] = nlohmann::json::array();
    for (const auto& k : kernels)
      ks.push_back({{"id", k.id},
                    {"name", k.name},
                    {"kind", k.kind},
                    {"layer", k.layer},
                    {"stream", k.stream},
                    {"start_ns", k.start_ns},
                    {"end_ns", k.end_ns},
                    {"bytes_read", k.bytes_read},
                    {"bytes_written", k.bytes_written},
                    {"flops", k.flops},
                    {"roofline_ns", k.roofline_ns},
                    {"bound", k.bound},
                    {"measured_ns", k.measured_ns},
                    {"ctas", k.ctas},
                    {"ctas_per_sm", k.ctas_per_sm},
                    {"simulated", k.simulated},
                    {"processor", k.processor},
                    {"wall_s", k.wall_s}});
  }
  return j;
}

}  // namespace indexsim::sim
