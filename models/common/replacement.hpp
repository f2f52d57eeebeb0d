// SPDX-License-Identifier: Apache-2.0
// A cache's replacement policy (the L2, the SRAM in cache mode): which way of a set gives way.
//
// The cache keeps one 64-bit word of policy state in each way and owns what is not a choice: an
// invalid way is filled first, a way with a fill in flight is never evicted. The policy updates a
// way's word on a hit (touch) and on a fill (insert), and picks the victim among the ways the cache
// may evict. The victim search runs on every miss, so the ways are handed over in place (a set's
// words `stride` bytes apart) with a mask of the eligible ones, not copied. A new policy is one file in models/replacement/ that registers
// itself; no cache changes.
#pragma once

#include <cstddef>
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
  // Way w's word is at word(first, stride, w); `eligible` (not 0) has bit w set for each way the
  // cache may evict. Returns the way to evict.
  virtual uint32_t victim(uint64_t* first, size_t stride, uint64_t eligible) = 0;
  // True when victim() is always first_smallest() (LRU, FIFO): a cache may then find the victim in
  // its own pass over the set, with no call per miss. The answer is the policy's, not the cache's.
  virtual bool evicts_first_smallest() const { return false; }
};

inline uint64_t& word(uint64_t* first, size_t stride, uint32_t way) {
  return *reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(first) + way * stride);
}

// The first eligible way (in way order) whose word is smallest: the victim of the age-ordered policies.
inline uint32_t first_smallest(uint64_t* first, size_t stride, uint64_t eligible) {
  uint32_t best = uint32_t(__builtin_ctzll(eligible));
  uint64_t best_word = word(first, stride, best);
  for (uint64_t m = eligible & (eligible - 1); m; m &= m - 1) {
    const uint32_t w = uint32_t(__builtin_ctzll(m));
    const uint64_t v = word(first, stride, w);
    if (v < best_word) best = w, best_word = v;
  }
  return best;
}

// A policy whose victim is the first eligible way with the smallest word (LRU, FIFO): it says so,
// and defines only how touches and fills set the word.
class FirstSmallestPolicy : public ReplacementPolicy {
 public:
  uint32_t victim(uint64_t* first, size_t stride, uint64_t eligible) override {
    return first_smallest(first, stride, eligible);
  }
  bool evicts_first_smallest() const override { return true; }
};

// victim() takes the eligible ways as a 64-bit mask: no set has more ways than this.
constexpr uint32_t kMaxReplacementWays = 64;

// Policies are built by name; `seed` feeds those that draw (the same seed, the same victims).
using ReplacementRegistry = config::Registry<ReplacementPolicy, uint64_t>;

}  // namespace indexsim::model
