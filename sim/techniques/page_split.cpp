// SPDX-License-Identifier: Apache-2.0
#include "sim/techniques/page_split.hpp"

#include <algorithm>
#include <cmath>

namespace indexsim::sim {

using trace::AccessRecord;

uint64_t PageSplit::copy_row_bytes() const {
  const uint64_t entries = row_bytes / entry_bytes;
  return (entries / page * head + std::min(entries % page, head)) * entry_bytes;
}

uint64_t PageSplit::copy_offset(uint64_t row, uint64_t page_index) const {
  return row * copy_row_bytes() + page_index * head * entry_bytes;
}

bool split_pages(const AccessRecord& a, const PageSplit& s, std::vector<AccessRecord>& head,
                 std::vector<AccessRecord>& tail) {
  const uint64_t P = s.page * s.entry_bytes, H = s.head * s.entry_bytes;
  if (a.kind != AccessRecord::Kind::strided || a.count != 1 || a.cta_stride_bytes < 0 || s.entry_bytes == 0 ||
      s.head == 0 || s.head >= s.page || s.row_bytes == 0 || s.row_bytes % s.entry_bytes != 0)
    return false;
  if (uint64_t(a.cta_stride_bytes) % P != 0) return false;
  const uint64_t e = a.elem_bytes, k = e / P, rem = e % P;
  // Every CTA's stretch: one row, starting on a page. CTAs in one row move by whole pages, so a run
  // of them is one record on each side.
  for (uint32_t i = 0; i < a.cta_count;) {
    const uint64_t off = a.base + uint64_t(a.cta_stride_bytes) * i;
    const uint64_t row = off / s.row_bytes, lo = off % s.row_bytes;
    if (lo % P != 0 || lo + e > s.row_bytes) return false;
    uint32_t j = i + 1;
    while (j < a.cta_count && (a.base + uint64_t(a.cta_stride_bytes) * j) / s.row_bytes == row &&
           (a.base + uint64_t(a.cta_stride_bytes) * j) % s.row_bytes + e <= s.row_bytes)
      ++j;
    AccessRecord r = a;
    r.cta_first = a.cta_first + i;
    r.cta_count = j - i;
    // Head: the pages' heads, back to back in the copy.
    AccessRecord h = r;
    h.base = s.copy_offset(row, lo / P);
    h.elem_bytes = uint32_t(k * H + std::min(rem, H));
    h.cta_stride_bytes = int64_t(uint64_t(a.cta_stride_bytes) / P * H);
    if (h.elem_bytes > 0) head.push_back(h);
    // Tail: the rest of each whole page, then of the partial one.
    if (k > 0) {
      AccessRecord t = r;
      t.base = off + H;
      t.elem_bytes = uint32_t(P - H);
      t.count = k;
      t.stride_bytes = int64_t(P);
      tail.push_back(t);
    }
    if (rem > H) {
      AccessRecord t = r;
      t.base = off + k * P + H;
      t.elem_bytes = uint32_t(rem - H);
      tail.push_back(t);
    }
    i = j;
  }
  return true;
}

bool split_fraction(const AccessRecord& a, double fraction, uint32_t granule, std::vector<AccessRecord>& head,
                    std::vector<AccessRecord>& tail) {
  if (a.kind != AccessRecord::Kind::strided || granule == 0 || a.elem_bytes % granule != 0) return false;
  const uint64_t units = a.elem_bytes / granule;
  const uint64_t h = std::min<uint64_t>(units, uint64_t(std::llround(fraction * double(units)))) * granule;
  if (h > 0) {
    AccessRecord r = a;
    r.elem_bytes = uint32_t(h);
    head.push_back(r);
  }
  if (h < a.elem_bytes) {
    AccessRecord r = a;
    r.base += h;
    r.elem_bytes = uint32_t(a.elem_bytes - h);
    tail.push_back(r);
  }
  return true;
}

}  // namespace indexsim::sim
