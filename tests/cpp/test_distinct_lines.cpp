// SPDX-License-Identifier: Apache-2.0
// The fast mode's distinct-line estimate (models/common/distinct_lines.hpp), which bounds how far
// back a sample's skipped CTAs warm the caches.
#include <gtest/gtest.h>

#include "models/common/distinct_lines.hpp"

using namespace indexsim;

TEST(DistinctLines, CountsEachLineOnce) {
  // Linear counting (models/common/distinct_lines.hpp): n distinct lines among repeats leave about
  // m exp(-n/m) bits clear; at 16 bits a line of the target, the estimate is within 1 %.
  model::DistinctLines d(100000);
  for (int pass = 0; pass < 3; ++pass)
    for (uint64_t l = 0; l < 60000; ++l) d.add(l * 7);
  EXPECT_NEAR(d.estimate(), 60000, 600);
  EXPECT_FALSE(d.reached());
  for (uint64_t l = 60000; l < 99000; ++l) d.add(l * 7);
  EXPECT_FALSE(d.reached());
  for (uint64_t l = 99000; l < 102000; ++l) d.add(l * 7);
  EXPECT_TRUE(d.reached());
}
