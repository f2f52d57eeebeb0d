// SPDX-License-Identifier: Apache-2.0
// IndexPool's functional model: gated weighted pooling (kernels::cpu::gated_pool) of `ratio`
// indexer vectors into one, along `tokens` (consecutive tokens' keys) or `vectors` (the `heads`
// vectors of one token), with the last `recent_full` tokens kept unpooled.
//
// No trained gate exists for the fixture's model, so the gate is either `uniform` (gate weights 0:
// every member weighs the same, i.e. the mean, for sigmoid and softmax alike) or `random` (seeded
// N(0, 1/width) weights: what an untrained gate does to the result).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cpu/reference.hpp"
#include "sim/functional/quantize.hpp"
#include "sim/functional/stored.hpp"

namespace indexsim::sim::functional {

enum class PoolAxis { tokens, vectors };
enum class GateInit { uniform, random };

struct PoolSpec {
  int ratio = 4;
  PoolAxis axis = PoolAxis::tokens;
  kernels::cpu::Gate gate = kernels::cpu::Gate::sigmoid;
  GateInit init = GateInit::uniform;
  uint64_t seed = 1;
  int64_t recent_full = 0;
  Format precision = Format::fp16;   // of the pooled vectors (fp16 or fp32); recent keys stay as given
};

// keys: tokens × dim, each row `heads` vectors of dim/heads. `stream` varies the random gate per layer.
// Along tokens, the history [0, tokens - recent_full) is cut into groups of `ratio` from its start; a
// last, shorter group is the tail pool (pooled from what it has, always selected). Along vectors, each
// history token's vectors are pooled in groups of `ratio` and every member's slot gets its group's vector.
Stored pool_keys(const float* keys, int64_t tokens, int dim, int heads, const PoolSpec& spec, uint64_t stream);

std::string describe(const PoolSpec& spec);

}  // namespace indexsim::sim::functional
