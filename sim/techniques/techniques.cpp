// SPDX-License-Identifier: Apache-2.0
#include "sim/techniques/techniques.hpp"

namespace indexsim::sim {

namespace {
// Storage first (what a stored entry is: precision, then dimensions, then pooling), then sharing
// across layers, which decides which layers keep those entries at all.
const char* const kPipelineOrder[] = {"quantize", "dim_prune", "index_pool", "index_share"};
}  // namespace

TechniquePipeline TechniquePipeline::load(const config::Node& root) {
  TechniquePipeline p;
  auto& reg = TechniqueRegistry::instance();
  for (const char* section : kPipelineOrder) {
    auto node = root.opt_child(section);
    if (!node) continue;
    if (!node->opt<bool>("enabled", true)) {
      node->note(section);  // the parameters of a disabled technique are not read
      for (const auto& k : node->keys()) node->note(k);
      continue;
    }
    if (!reg.has(section)) node->fail("", section, "no technique registered under this name");
    p.stages.emplace_back(section, reg.make(section, *node));
    p.enabled[section] = true;
  }
  return p;
}

void TechniquePipeline::reshape(trace::ModelShape& shape) const {
  for (const auto& [name, t] : stages) t->reshape(shape);
}

void TechniquePipeline::transform(Workload& w, TechniqueContext& ctx) const {
  for (const auto& [name, t] : stages) {
    if (ctx.report) (*ctx.report)[name] = nlohmann::json::object();
    t->transform(w, ctx);
  }
}

}  // namespace indexsim::sim
