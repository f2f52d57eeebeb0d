// SPDX-License-Identifier: Apache-2.0
// A cache's replacement policy (the L2, the SRAM in cache mode): which way of a set gives way.
//
// The cache keeps one 64-bit word of policy state in each way and owns what is not a choice: an
// invalid way is filled first, a way with a fill in flight is never evicted. The policy updates a
// way's word on a hit (touch) and on a fill (insert), and picks the victim among the ways the cache
// may evict, given in way order. A new policy is one file in models/replacement/ that registers
// itself; no cache changes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/common/registry.hpp"

namespace indexsim::model {

class ReplacementPolicy {
 public:
  virtual ~ReplacementPolicy() = default;
  virtual void touch(uint64_t& way_state) = 0;
  virtual void insert(uint64_t& way_state) = 0;
  // `n` >= 1 candidate ways' states; returns the index (0 .. n-1) of the one to evict.
  virtual uint32_t victim(uint64_t* const* way_states, uint32_t n) = 0;
};

// The index of the first of the `n` words that is smallest: the victim of the age-ordered policies.
inline uint32_t first_smallest(uint64_t* const* way_states, uint32_t n) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; ++i)
    if (*way_states[i] < *way_states[best]) best = i;
  return best;
}

// Caches keep a set's candidate ways on the stack for victim(): no set has more ways than this.
constexpr uint32_t kMaxReplacementWays = 64;

// Policies are built by name; `seed` feeds those that draw (the same seed, the same victims).
using ReplacementRegistry = config::Registry<ReplacementPolicy, uint64_t>;

}  // namespace indexsim::model
