// SPDX-License-Identifier: Apache-2.0
// Indexer-cache techniques. Each lives in its own file, reads its own section of the techniques
// config (`index_share:`, `index_pool:`, `dim_prune:`, `quantize:`), and acts at two points:
//  - reshape(): what the stored data looks like (bytes per indexer entry, entries per token, which
//    layers keep an indexer cache). An emulated trace is generated from the reshaped model, so its
//    scans and footprints are exact to the byte.
//  - transform(): the kernel DAG: kernels a technique adds (the pooling gate, the PCA projection,
//    hash lookups), kernels it moves to another stream (overlap) and dependences it adds or removes,
//    and tensors it pins to a region (first-layer SRAM).
// Techniques compose in a fixed pipeline order (see techniques.cpp) and record what they did.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/params.hpp"
#include "models/common/registry.hpp"
#include "sim/placement/placement.hpp"
#include "sim/workload/workload.hpp"
#include "traces/generators/micro_batches.hpp"
#include "traces/generators/model_shape.hpp"

namespace indexsim::sim {

struct TechniqueContext {
  const trace::ModelShape* shape = nullptr;  // null when replaying a captured trace
  PlacementPolicy* placement = nullptr;
  nlohmann::json* report = nullptr;          // what the technique did, stored with the run
  uint32_t processors = 1;                   // the hardware's: 2 with an NPU (Workload::Kernel::processor)
  const std::vector<RegionInfo>* regions = nullptr;  // the placement's table (noc.regions); null: unknown
};

// New tokens a sequence appends in the step the trace metadata describes: its queries in decode,
// its chunk in prefill; 1 when the metadata has no step (a captured trace).
inline uint64_t new_tokens_per_sequence(const nlohmann::json& metadata) {
  if (!metadata.contains("step")) return 1;
  const auto& st = metadata["step"];
  return st.value("phase", std::string("decode")) == "decode" ? st.value("queries", uint64_t(1))
                                                              : st.value("chunk_tokens", uint64_t(1));
}

class Technique {
 public:
  virtual ~Technique() = default;
  virtual void reshape(trace::ModelShape& shape) const {}
  virtual void transform(Workload& w, TechniqueContext& ctx) const {}
};

// The micro-batches the emulated step was split into (trace metadata two_batch_overlap): 1 unless
// two-batch overlap split it.
inline uint32_t micro_batches(const nlohmann::json& metadata) {
  const auto it = metadata.find("two_batch_overlap");
  return it == metadata.end() ? 1 : it->value("micro_batches", 1u);
}

// A stream for what a technique adds beside the SMs' kernels: `usual` in a step of one chain (as
// before two-batch overlap existed); in a split step, the first past every stream it uses.
inline uint32_t side_stream(const Workload& w, uint32_t usual) {
  if (micro_batches(w.metadata()) < 2) return usual;
  uint32_t s = usual;
  for (const auto& k : w.kernels()) s = std::max(s, k.rec.stream + 1);
  return s;
}

// The name of what a technique adds for kernel `k` (a kernel, or a tensor of its micro-batch's
// own): "L<layer>.<what>", with k's micro-batch prefix when two-batch overlap split the step.
inline std::string name_beside(const trace::KernelRecord& k, const std::string& what) {
  return (trace::micro_batch_of(k.name) ? std::string(trace::kSecondMicroBatchPrefix) : std::string()) + "L" +
         std::to_string(k.layer) + "." + what;
}

// Built from the technique's config section; returns nullptr when the section says enabled: false.
using TechniqueRegistry = config::Registry<Technique, const config::Node&>;

}  // namespace indexsim::sim
