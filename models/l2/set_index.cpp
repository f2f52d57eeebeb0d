// SPDX-License-Identifier: Apache-2.0
#include "models/l2/set_index.hpp"

#include <algorithm>
#include <utility>

#include "models/common/port.hpp"  // mix64

namespace indexsim::model {

SetIndex::SetIndex(uint32_t slices, uint32_t sets_per_slice, uint32_t ways, bool block_permutation)
    : slices_(slices), sets_(sets_per_slice), ways_(ways), by_slices_(std::max(1u, slices)),
      by_sets_(std::max(1u, sets_per_slice)) {
  if (!block_permutation) return;
  // One fixed shuffle of the cache's sets (Fisher-Yates driven by splitmix64, not <random>, whose
  // shuffles differ between standard libraries): the same on every machine.
  const uint64_t n = uint64_t{slices} * sets_per_slice;
  perm_.resize(n);
  for (uint64_t i = 0; i < n; ++i) perm_[i] = static_cast<uint32_t>(i);
  uint64_t x = 0x1f2e3d4c5b6a7988ull;
  for (uint64_t i = n; i > 1; --i) std::swap(perm_[i - 1], perm_[mix64(++x) % i]);
  by_all_sets_ = FastDiv(n);
}

SetIndex::Ref SetIndex::at(uint64_t h) const {
  const uint64_t q = by_slices_.div(h);
  const auto slice = static_cast<uint32_t>(h - q * slices_);
  const auto set = static_cast<uint32_t>(by_sets_.mod(q));
  return {slice, (slice * sets_ + set) * ways_};
}

SetIndex::Ref SetIndex::of(uint64_t line) const {
  if (perm_.empty()) return at(mix64(line));
  // The line's place in its block of n, turned by the block's offset.
  const uint64_t g = by_all_sets_.div(line);
  uint64_t i = line - g * perm_.size() + by_all_sets_.mod(mix64(g));
  if (i >= perm_.size()) i -= perm_.size();
  return at(perm_[i]);
}

void SetIndex::of_run(uint64_t first, uint64_t last, std::vector<Ref>& out) const {
  if (perm_.empty()) {
    for (uint64_t l = first; l <= last; ++l) out.push_back(of(l));
    return;
  }
  // Consecutive lines of one block take consecutive places in its permutation.
  const uint64_t n = perm_.size();
  uint64_t g = by_all_sets_.div(first), in_block = first - g * n;
  uint64_t i = in_block + by_all_sets_.mod(mix64(g));
  if (i >= n) i -= n;
  for (uint64_t l = first; l <= last; ++l) {
    out.push_back(at(perm_[i]));
    if (++in_block == n) {
      in_block = 0;
      i = by_all_sets_.mod(mix64(++g));
    } else if (++i == n) {
      i = 0;
    }
  }
}

SetIndex::Ref SetIndex::in_partition(Ref home, uint32_t partition, uint32_t partitions) const {
  const uint32_t per = slices_ / partitions;
  const uint32_t slice = partition * per + home.slice % per;
  return {slice, (slice * sets_ + set_in_slice(home)) * ways_};
}

}  // namespace indexsim::model
