// SPDX-License-Identifier: Apache-2.0
// Placement's tiers come from the hardware's region table (noc.regions[].tier), not from region
// names: a new tier receives tensors with no change to sim/placement.
#include <gtest/gtest.h>

#include "sim/placement/placement.hpp"

using namespace indexsim;
using sim::RegionInfo;
using sim::Tier;

namespace {
trace::TensorRecord tensor(uint32_t id, uint64_t bytes, const std::string& name) {
  trace::TensorRecord t;
  t.id = id;
  t.name = name;
  t.bytes = bytes;
  t.cls = trace::TensorClass::kv_cache;
  return t;
}
}  // namespace

TEST(PlacementTiers, TensorsFillPrimaryThenEachOverflowRegionInTableOrder) {
  // Pages of 1 MiB. "fast" (primary) holds 2 MiB, "pool" and "far" (overflow) 1 MiB and 4 MiB:
  // four 1 MiB tensors land fast, fast, pool, far; "scratch" (pinned) takes none of them.
  const uint64_t MiB = 1 << 20;
  const std::vector<RegionInfo> regions = {{"fast", Tier::primary, 0, 2 * MiB, 100},
                                           {"scratch", Tier::pinned, 1ull << 44, 8 * MiB, 100},
                                           {"pool", Tier::overflow, 2ull << 44, 1 * MiB, 10},
                                           {"far", Tier::overflow, 3ull << 44, 4 * MiB, 1}};
  std::vector<trace::TensorRecord> ts;
  for (uint32_t i = 0; i < 4; ++i) ts.push_back(tensor(i, MiB, "t" + std::to_string(i)));
  sim::PlacementPolicy policy;
  policy.page_bytes = MiB;
  policy.cxl_enabled = true;
  const auto pl = sim::place(ts, regions, policy);
  EXPECT_EQ(pl.region_of, (std::vector<uint32_t>{0, 0, 2, 3}));
  EXPECT_EQ(pl.spilled.size(), 2u);
  // Overflow off: the third tensor has nowhere to go, and the error names the primary region.
  policy.cxl_enabled = false;
  try {
    sim::place(ts, regions, policy);
    FAIL() << "placed more than the primary tier holds";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("fast budget"), std::string::npos) << e.what();
  }
  // A pin puts a tensor in a pinned region.
  policy.cxl_enabled = true;
  policy.pins["t3"] = "scratch";
  EXPECT_EQ(sim::place(ts, regions, policy).region_of[3], 1u);
}

TEST(PlacementTiers, AClassSentToARegionGoesThereWhileItFitsAndFallsBackAfter) {
  // placement.class_regions {weights: flash}: "flash" (pinned, 2 MiB) takes the first two 1 MiB
  // weight tensors; the third does not fit, is spilled and lands in "fast" by the normal order; the
  // KV tensor stays in "fast". A region the hardware lacks is an error naming its regions.
  const uint64_t MiB = 1 << 20;
  const std::vector<RegionInfo> regions = {{"fast", Tier::primary, 0, 8 * MiB, 100},
                                           {"flash", Tier::pinned, 1ull << 44, 2 * MiB, 10}};
  std::vector<trace::TensorRecord> ts;
  for (uint32_t i = 0; i < 3; ++i) {
    ts.push_back(tensor(i, MiB, "w" + std::to_string(i)));
    ts.back().cls = trace::TensorClass::weights;
  }
  ts.push_back(tensor(3, MiB, "kv"));
  sim::PlacementPolicy policy;
  policy.page_bytes = MiB;
  policy.class_regions[trace::TensorClass::weights] = "flash";
  const auto pl = sim::place(ts, regions, policy);
  EXPECT_EQ(pl.region_of, (std::vector<uint32_t>{1, 1, 0, 0}));
  EXPECT_EQ(pl.spilled, std::vector<std::string>{"w2"});
  policy.class_regions[trace::TensorClass::weights] = "hbf";
  try {
    sim::place(ts, regions, policy);
    FAIL() << "placed weights in a region the hardware does not have";
  } catch (const sim::PlacementError& e) {
    EXPECT_NE(std::string(e.what()).find("its regions: fast, flash"), std::string::npos) << e.what();
  }
}
