// SPDX-License-Identifier: Apache-2.0
#include "sim/techniques/row_split.hpp"

#include <algorithm>

namespace indexsim::sim {

using trace::AccessRecord;

bool split_rows(const AccessRecord& a, const RowSplit& s, std::vector<AccessRecord>& head,
                std::vector<AccessRecord>& tail) {
  if (a.kind != AccessRecord::Kind::strided || a.cta_stride_bytes < 0 || s.row_bytes == 0 || a.elem_bytes == 0) return false;
  if (a.count > 1 && (a.stride_bytes <= 0 || uint64_t(a.stride_bytes) % s.row_bytes != 0)) return false;
  const uint64_t e = a.elem_bytes;
  // Each CTA's stretch [lo, lo + e) of its row: the head takes [lo, min(lo + e, split)).
  struct Part {
    uint64_t row, lo, head;  // head bytes of the stretch
  };
  std::vector<Part> parts(a.cta_count);
  for (uint32_t i = 0; i < a.cta_count; ++i) {
    const uint64_t off = a.base + uint64_t(a.cta_stride_bytes) * i;
    const uint64_t row = off / s.row_bytes, lo = off % s.row_bytes;
    if (lo + e > s.row_bytes) return false;
    const uint64_t h = lo >= s.split_bytes ? 0 : std::min(e, s.split_bytes - lo);
    parts[i] = {row, lo, h};
  }
  // Runs of consecutive CTAs in one row with the same head length: one record each side (their
  // starts move by the CTA stride, in the original and in the compacted tensor alike).
  for (uint32_t i = 0; i < a.cta_count;) {
    uint32_t j = i + 1;
    while (j < a.cta_count && parts[j].row == parts[i].row && parts[j].head == parts[i].head) ++j;
    const Part& p = parts[i];
    AccessRecord r = a;
    r.cta_first = a.cta_first + i;
    r.cta_count = j - i;
    if (p.head > 0) {
      AccessRecord h = r;
      h.elem_bytes = uint32_t(p.head);
      if (s.compact_head) {
        h.base = p.row * s.split_bytes + p.lo;
        // Elements one row apart stay one (compacted) row apart.
        if (a.count > 1) h.stride_bytes = int64_t(uint64_t(a.stride_bytes) / s.row_bytes * s.split_bytes);
      } else {
        h.base = p.row * s.row_bytes + p.lo;
      }
      head.push_back(h);
    }
    if (p.head < e) {
      AccessRecord t = r;
      t.base = p.row * s.row_bytes + p.lo + p.head;
      t.elem_bytes = uint32_t(e - p.head);
      tail.push_back(t);
    }
    i = j;
  }
  return true;
}

}  // namespace indexsim::sim
