// SPDX-License-Identifier: Apache-2.0
// FastDiv: n / d and n % d exactly, for every 64-bit n, as the `div` instruction gives them.
#include <gtest/gtest.h>

#include <random>

#include "models/common/fast_div.hpp"

using indexsim::model::FastDiv;

TEST(FastDiv, DividesEverySixtyFourBitNumberExactlyAsTheDivInstructionDoes) {
  std::mt19937_64 rng(7);
  // The divisors the models use (slices, sets, ports: 1, powers of two, 96, 266, ...), the edges of
  // the 64-bit range, and random ones.
  std::vector<uint64_t> divisors = {1, 2, 3, 7, 64, 80, 96, 120, 266, 1000, (1ull << 32) - 1, 1ull << 32,
                                    (1ull << 63) - 1, 1ull << 63, ~0ull};
  for (int i = 0; i < 50; ++i) divisors.push_back(rng() >> (rng() % 64) | 1);
  for (uint64_t d : divisors) {
    const FastDiv f(d);
    std::vector<uint64_t> ns = {0, 1, d - 1, d, d + 1, ~0ull, ~0ull - 1, 1ull << 63};
    for (int i = 0; i < 2000; ++i) ns.push_back(rng());
    for (uint64_t n : ns) {
      ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
      ASSERT_EQ(f.mod(n), n % d) << n << " % " << d;
    }
  }
  EXPECT_THROW(FastDiv(0), std::invalid_argument);
}
