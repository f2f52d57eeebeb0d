// SPDX-License-Identifier: Apache-2.0
// Cutting a scan in two so that both halves stay balanced over their CTAs: every page of `page`
// entries of a row (a sequence's indexer cache) gives its first `head` entries to one side and the
// rest to the other, so each CTA of the scan keeps its share of each side. IndexShare's first-layer
// offload hands the heads to the NPU, which reads them from a compacted copy: the heads of a row's
// pages back to back, rows of `copy_row_bytes`.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/records.hpp"

namespace indexsim::sim {

struct PageSplit {
  uint64_t entry_bytes = 0;
  uint64_t page = 0, head = 0;     // entries: of a page, and its head (0 < head < page)
  uint64_t row_bytes = 0;          // a row of the original tensor
  uint64_t copy_row_bytes() const;  // a row of the copy, for rows of row_bytes
  uint64_t copy_offset(uint64_t row, uint64_t page_index) const;  // where a page's head lands in the copy
};

// Appends the parts of a scan record to `head` (addressing the copy) and `tail` (the original):
// the record's CTAs must each read one stretch of a row that starts on a page (count 1, CTA stride
// a whole number of pages). False, appending nothing, otherwise.
bool split_pages(const trace::AccessRecord& a, const PageSplit& s, std::vector<trace::AccessRecord>& head,
                 std::vector<trace::AccessRecord>& tail);

// The outputs that go with a split scan (its logits): each element's first `fraction` (in whole
// `granule`s) to `head`, the rest to `tail`, both in the original tensor. Same bytes and rows as
// the scores each side computes, though not interleaved page by page as they are.
bool split_fraction(const trace::AccessRecord& a, double fraction, uint32_t granule,
                    std::vector<trace::AccessRecord>& head, std::vector<trace::AccessRecord>& tail);

}  // namespace indexsim::sim
