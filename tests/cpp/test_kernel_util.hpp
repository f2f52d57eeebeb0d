// SPDX-License-Identifier: Apache-2.0
// Kernel records for the replay and processor tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/workload.hpp"
#include "traces/records.hpp"

namespace indexsim::test {

// A kernel of `ctas` CTAs of 128 threads, waiting on `deps`, on `stream`.
inline trace::KernelRecord kernel(uint32_t id, uint32_t ctas, std::vector<uint32_t> deps = {}, uint32_t stream = 0) {
  trace::KernelRecord k;
  k.id = id;
  k.name = "k" + std::to_string(id);
  k.kind = trace::KernelKind::test;
  k.grid = {ctas, 1, 1};
  k.block = {128, 1, 1};
  k.deps = std::move(deps);
  k.stream = stream;
  return k;
}

// The DAG the replay takes, over `tensors` anonymous tensors.
inline sim::Workload workload(const std::vector<trace::KernelRecord>& ks, const std::vector<trace::AccessRecord>& as,
                              uint32_t tensors) {
  std::vector<trace::TensorRecord> ts(tensors);
  for (uint32_t i = 0; i < tensors; ++i) {
    ts[i].id = i;
    ts[i].name = "t" + std::to_string(i);
  }
  return sim::Workload(nlohmann::json::object(), ts, ks, as);
}

}  // namespace indexsim::test
