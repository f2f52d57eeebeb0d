// SPDX-License-Identifier: Apache-2.0
// Where an L2 line lives: its slice and set, a pure function of the line address (L2Params::
// set_index). hashed: a 64-bit mix of the line, so lines land independently. block_permutation:
// each aligned block of (slices x sets) lines is one fixed shuffle of every set, turned by a hash of
// the block, so a contiguous buffer spreads evenly and strides still scatter.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/fast_div.hpp"

namespace indexsim::model {

class SetIndex {
 public:
  struct Ref {
    uint32_t slice, base;  // the line's slice, and its set's first way among all the cache's ways
  };
  SetIndex(uint32_t slices, uint32_t sets_per_slice, uint32_t ways, bool block_permutation);
  Ref of(uint64_t line) const;
  // of() of each line of [first, last], appended: a block's offset is hashed once for its lines.
  void of_run(uint64_t first, uint64_t last, std::vector<Ref>& out) const;
  // The same set of the slice at the same place in `partition`'s range of slices.
  Ref in_partition(Ref home, uint32_t partition, uint32_t partitions) const;
  uint32_t set_in_slice(Ref r) const { return r.base / ways_ - r.slice * sets_; }

 private:
  Ref at(uint64_t h) const;  // the slice and set of a place among all sets

  uint32_t slices_, sets_, ways_;
  FastDiv by_slices_, by_sets_;
  std::vector<uint32_t> perm_;  // block_permutation: the shuffle of every set
  FastDiv by_all_sets_;         // ... and its size
};

}  // namespace indexsim::model
