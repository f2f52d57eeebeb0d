// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/run_result.hpp"

#include "models/common/params.hpp"

namespace indexsim::sim {

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
