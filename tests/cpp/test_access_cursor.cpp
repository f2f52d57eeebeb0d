// SPDX-License-Identifier: Apache-2.0
// The order in which a CTA's requests leave (models/sm/sm.hpp AccessCursor).
#include <gtest/gtest.h>

#include <vector>

#include "models/sm/sm.hpp"

using namespace indexsim;
using trace::AccessRecord;

namespace {

// `rows` rows of `row_bytes`, back to back, at `base` of tensor 0 (a GEMM's A or B panel).
AccessRecord panel(uint64_t base, uint32_t rows, uint32_t row_bytes) {
  AccessRecord a;
  a.cta_count = 1;
  a.kind = AccessRecord::Kind::strided;
  a.base = base;
  a.elem_bytes = row_bytes;
  a.count = rows;
  a.stride_bytes = row_bytes;
  return a;
}

std::vector<model::CtaRequest> walk(const std::vector<const AccessRecord*>& recs, uint32_t chunk, uint32_t steps) {
  static const std::vector<uint64_t> base{0};
  model::AccessCursor c(&recs, 0, &base, 128, 32, chunk, nullptr, steps);
  std::vector<model::CtaRequest> out;
  while (!c.done()) out.push_back(c.next());
  return out;
}

}  // namespace

// A: 2 rows of 512 B at 0; B: 3 rows of 512 B at 1 MiB. In 4 steps (128 B of every row a step)
// the requests go A row 0, A row 1, B rows 0-2 at offset 128 s, for s = 0..3: 20 line requests,
// request i at offset 128 x (i / 5) of its row.
TEST(AccessCursor, InStepsEachStepReadsItsSliceOfEveryRowOfEveryRecord) {
  const AccessRecord a = panel(0, 2, 512), b = panel(1 << 20, 3, 512);
  const std::vector<const AccessRecord*> recs{&a, &b};
  const auto reqs = walk(recs, 128, 4);
  ASSERT_EQ(reqs.size(), 20u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    const uint64_t s = i / 5, j = i % 5;
    const uint64_t want = j < 2 ? j * 512 + 128 * s : (1 << 20) + (j - 2) * 512 + 128 * s;
    EXPECT_EQ(reqs[i].addr, want) << i;
    EXPECT_EQ(reqs[i].bytes, 128u) << i;
  }
  // Record by record (no steps), the same bytes: A's 1 KiB, then B's 1.5 KiB, line by line.
  const auto seq = walk(recs, 128, 0);
  ASSERT_EQ(seq.size(), 20u);
  EXPECT_EQ(seq[0].addr, 0u);
  EXPECT_EQ(seq[7].addr, 896u);
  EXPECT_EQ(seq[8].addr, uint64_t(1 << 20));
}

// A step is at least a chunk: 4 KiB rows in 32 steps with 2 KiB chunks go in 2 steps of 2 KiB,
// one request per row per step; rows of unequal length step together, the shorter finishing first.
TEST(AccessCursor, AStepIsAtLeastOneChunkAndShortRowsFinishFirst) {
  const AccessRecord a = panel(0, 2, 4096), b = panel(1 << 20, 1, 2048);
  const std::vector<const AccessRecord*> recs{&a, &b};
  const auto reqs = walk(recs, 2048, 32);
  // step 0: A0 [0, 2K), A1 [4K, 6K), B0 [1M, 1M + 2K) (B's step: its 2 KiB row / 32, raised to a
  // chunk: the whole row); step 1: A0 [2K, 4K), A1 [6K, 8K).
  ASSERT_EQ(reqs.size(), 5u);
  const uint64_t want[] = {0, 4096, 1 << 20, 2048, 6144};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(reqs[i].addr, want[i]) << i;
    EXPECT_EQ(reqs[i].bytes, 2048u) << i;
  }
}
