// SPDX-License-Identifier: Apache-2.0
// Replacement policies (models/replacement/), one interface shared by the L2 and the SRAM.
#include <gtest/gtest.h>

#include <vector>

#include "models/common/replacement.hpp"

using namespace indexsim::model;

namespace {

// A 4-way set driven through a policy: `access` returns true on a hit, fills an invalid way or the
// policy's victim on a miss.
struct Set {
  explicit Set(const std::string& name) : p(ReplacementRegistry::instance().make(name, 1)) {}
  bool access(uint64_t line) {
    for (int w = 0; w < 4; ++w)
      if (tag[w] == line + 1) return p->touch(state[w]), true;
    int v = -1;
    for (int w = 0; w < 4 && v < 0; ++w)
      if (tag[w] == 0) v = w;
    if (v < 0) v = int(p->victim(&state[0], sizeof(uint64_t), 0xF));
    tag[v] = line + 1;
    p->insert(state[v]);
    return false;
  }
  std::unique_ptr<ReplacementPolicy> p;
  uint64_t tag[4] = {}, state[4] = {};
};

int hits(const std::string& policy, const std::vector<uint64_t>& lines) {
  Set s(policy);
  int h = 0;
  for (uint64_t l : lines) h += s.access(l);
  return h;
}

}  // namespace

TEST(Replacement, LruEvictsTheLeastRecentlyUsedFifoTheFirstFilled) {
  // Fill A B C D, touch A, then E: LRU evicts B (oldest use), so A hits; FIFO evicts A (first in).
  const std::vector<uint64_t> seq = {1, 2, 3, 4, 1, 5, 1};
  EXPECT_EQ(hits("lru", seq), 2);   // A at step 5 and 7
  EXPECT_EQ(hits("fifo", seq), 1);  // A at step 5 only
}

TEST(Replacement, SrripKeepsAReusedLineThroughAScan) {
  // A is used twice (RRPV 0), then a scan of 8 new lines passes: each fill enters at RRPV 2 and
  // reaches 3 first, so the scan evicts itself and A survives; under LRU the scan flushes A.
  std::vector<uint64_t> seq = {100, 100};
  for (uint64_t l = 0; l < 8; ++l) seq.push_back(l);
  seq.push_back(100);
  EXPECT_EQ(hits("srrip", seq), 2);
  EXPECT_EQ(hits("lru", seq), 1);
}

TEST(Replacement, PoliciesAreRegisteredByName) {
  for (const char* n : {"lru", "fifo", "srrip"}) EXPECT_TRUE(ReplacementRegistry::instance().has(n)) << n;
}
