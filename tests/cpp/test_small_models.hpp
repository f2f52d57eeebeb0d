// SPDX-License-Identifier: Apache-2.0
// Small runs of the shipped workloads for simulation-level tests: the model's own attention and
// indexer on a few layers, with MLPs and vocabulary cut down so that a run takes a second or two.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/simulation.hpp"

namespace indexsim::test {

// GLM-5.2 on four DSA layers, each with its own indexer, dense MLPs of 1024, a 2048-token vocabulary.
inline sim::RunSpec four_layer_glm52(const std::string& hardware, const std::string& techniques, uint64_t context,
                                     const std::vector<std::string>& sets = {}) {
  sim::RunSpec s;
  s.hardware = hardware;
  s.workload = "glm-5.2";
  s.techniques = techniques;
  s.step.context = context;
  s.fast = true;
  s.sets = {"workload.model.num_layers=4",
            "workload.layers=[{first: 0, last: 3, attention: dsa, indexer: full, mlp: dense}]",
            "workload.model.vocab_size=2048", "workload.mlp.dense_intermediate_size=1024"};
  s.sets.insert(s.sets.end(), sets.begin(), sets.end());
  return s;
}

}  // namespace indexsim::test
