// SPDX-License-Identifier: Apache-2.0
// Cutting a scan in two along its rows: a tensor of rows of `row_bytes` (a sequence's indexer cache,
// a query's logits row), each split at byte `split_bytes` into a head (the oldest entries) and a
// tail. A strided record whose CTAs each touch one stretch of a row (an element, or elements one
// row apart) becomes records of the head part and records of the tail part; a CTA straddling the
// split gives one record to each. IndexShare's first-layer offload hands the heads to the NPU.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/records.hpp"

namespace indexsim::sim {

struct RowSplit {
  uint64_t row_bytes = 0;
  uint64_t split_bytes = 0;   // head: [0, split_bytes) of every row
  // Head records address a compacted tensor of rows of split_bytes (the head's own copy, e.g. in
  // the NPU's SRAM), instead of the original tensor.
  bool compact_head = false;
};

// Appends `a`'s head and tail parts (either may be empty); false, appending nothing, when `a` is not
// a record of that form (a gather, a negative CTA stride, an element crossing a row, elements at
// different offsets in their rows).
bool split_rows(const trace::AccessRecord& a, const RowSplit& s, std::vector<trace::AccessRecord>& head,
                std::vector<trace::AccessRecord>& tail);

}  // namespace indexsim::sim
