// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <vector>

#include "sim/techniques/technique.hpp"

namespace indexsim::sim {

// The enabled techniques of a techniques config, in pipeline order.
struct TechniquePipeline {
  std::vector<std::pair<std::string, std::unique_ptr<Technique>>> stages;
  nlohmann::json enabled = nlohmann::json::object();  // section name → resolved parameters
  static TechniquePipeline load(const config::Node& root);
  void reshape(trace::ModelShape& shape) const;
  void transform(Workload& w, TechniqueContext& ctx) const;
};

}  // namespace indexsim::sim
