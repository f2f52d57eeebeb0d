// SPDX-License-Identifier: Apache-2.0
// Static re-reference interval prediction (Jaleel et al., ISCA 2010, "High performance cache
// replacement using re-reference interval prediction", SRRIP-HP with 2-bit RRPVs): a way's word is
// its predicted re-reference interval, 0 (soon) to 3 (distant). A fill predicts "long" (2), a hit
// "soon" (0); the victim is the first way at 3, after ageing every candidate until one is. A scan
// that touches each line once then leaves the lines that are reused in the cache, which LRU does not.
#include "models/common/replacement.hpp"

#include <algorithm>

namespace indexsim::model {
namespace {

constexpr uint64_t kDistant = 3, kLong = 2;

class Srrip : public ReplacementPolicy {
 public:
  void touch(uint64_t& s) override { s = 0; }
  void insert(uint64_t& s) override { s = kLong; }
  uint32_t victim(uint64_t* first, size_t stride, uint64_t eligible) override {
    uint64_t oldest = 0;
    for (uint64_t m = eligible; m; m &= m - 1) oldest = std::max(oldest, word(first, stride, uint32_t(__builtin_ctzll(m))));
    const uint64_t age = oldest < kDistant ? kDistant - oldest : 0;  // ageing rounds until one is distant
    uint32_t pick = ~0u;
    for (uint64_t m = eligible; m; m &= m - 1) {
      const uint32_t w = uint32_t(__builtin_ctzll(m));
      uint64_t& s = word(first, stride, w);
      s = std::min(kDistant, s + age);
      if (pick == ~0u && s == kDistant) pick = w;
    }
    return pick;
  }
};

INDEXSIM_REGISTER(ReplacementRegistry, "replacement", "srrip", [](uint64_t) { return std::make_unique<Srrip>(); });

}  // namespace
}  // namespace indexsim::model
