// SPDX-License-Identifier: Apache-2.0
// The L2's table of refused requests (models/l2/waiting_table.hpp) against std::map: the same ids
// found, with what was stored under them, through growth and deletions by backward shift.
#include <gtest/gtest.h>

#include <map>

#include "models/l2/waiting_table.hpp"

using indexsim::model::WaitingRequest;
using indexsim::model::WaitingTable;

TEST(WaitingTable, FindsWhatWasInsertedThroughGrowthAndBackwardShiftDeletion) {
  WaitingTable t;
  std::map<uint64_t, uint64_t> ref;  // id -> the addr stored with it
  uint64_t x = 12345;
  const auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull; };
  // Up to ~20,000 live ids (the table starts at 4096 slots and doubles at half load), drawn from a
  // small range so that erased ids come back, mixed with deletions.
  for (int step = 0; step < 200000; ++step) {
    const uint64_t id = (next() >> 33) % 40000;
    const bool erase = (next() >> 40) % 3 == 0;
    WaitingRequest* w = t.find(id);
    ASSERT_EQ(w != nullptr, ref.count(id) == 1) << "id " << id << " at step " << step;
    if (w != nullptr) {
      ASSERT_EQ(w->addr, ref[id]);
      if (erase) {
        t.erase(w);
        ref.erase(id);
      }
    } else if (!erase) {
      WaitingRequest& n = t.insert(id);
      n.addr = next();
      ref[id] = n.addr;
    }
    ASSERT_EQ(t.size(), ref.size());
  }
  EXPECT_GT(ref.size(), 10000u);  // it grew well past its first 4096 slots
  for (const auto& [id, addr] : ref) {
    const WaitingRequest* w = t.find(id);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->addr, addr);
  }
}

TEST(WaitingTable, ClearDropsEveryEntryAndTheTableTakesNewOnes) {
  WaitingTable t;
  for (uint64_t id = 0; id < 10000; ++id) t.insert(id * 7919).addr = id;
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  for (uint64_t id = 0; id < 10000; ++id) ASSERT_EQ(t.find(id * 7919), nullptr);
  t.insert(42).addr = 7;
  ASSERT_NE(t.find(42), nullptr);
  EXPECT_EQ(t.find(42)->addr, 7u);
  EXPECT_EQ(t.size(), 1u);
}
