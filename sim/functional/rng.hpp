// SPDX-License-Identifier: Apache-2.0
// Seeded Gaussian numbers that are the same on every standard library (std::normal_distribution is
// not): Box-Muller over mt19937_64 words.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace indexsim::sim::functional {

inline std::vector<float> gaussian(size_t n, uint64_t seed, double stddev = 1.0) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return (double(rng() >> 11) + 0.5) * 0x1.0p-53; };  // in (0, 1): log() is finite
  std::vector<float> out(n);
  for (float& x : out) x = float(stddev * std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * M_PI * uniform()));
  return out;
}

}  // namespace indexsim::sim::functional
