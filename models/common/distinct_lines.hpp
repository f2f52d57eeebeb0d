// SPDX-License-Identifier: Apache-2.0
// How many distinct lines a stream of accesses has touched, estimated in a fixed bitmap (linear
// counting: Whang, Vander-Zanden and Taylor, "A linear-time probabilistic counting algorithm for
// database applications", ACM TODS 15(2), 1990). A line sets one bit, chosen by a hash of its
// address; n distinct lines leave about m·exp(-n/m) of the m bits clear, so n ≈ -m·ln(clear/m).
// Sized for a target of n lines with m ≥ 16 n, the estimate at the target is within a fraction of a
// per cent (the method's standard error there is about 0.1 %); the fast mode only asks whether the
// target is reached, which is a count of clear bits against a threshold fixed once.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace indexsim::model {

class DistinctLines {
 public:
  // Answers reached() once about `target` distinct lines have been added.
  explicit DistinctLines(uint64_t target) {
    uint64_t m = 1024;
    while (m < 16 * target) m <<= 1;
    bits_.assign(m / 64, 0);
    mask_ = m - 1;
    clear_ = m;
    clear_at_target_ = uint64_t(double(m) * std::exp(-double(target) / double(m)));
  }
  void add(uint64_t line) {
    const uint64_t h = mix(line) & mask_;
    uint64_t& w = bits_[h >> 6];
    const uint64_t b = uint64_t(1) << (h & 63);
    clear_ -= (w & b) == 0;
    w |= b;
  }
  bool reached() const { return clear_ <= clear_at_target_; }
  double estimate() const {
    const double m = double(mask_ + 1);
    return -m * std::log(double(clear_ > 0 ? clear_ : 1) / m);
  }

 private:
  static uint64_t mix(uint64_t x) {  // splitmix64's finaliser: neighbouring lines land far apart
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  std::vector<uint64_t> bits_;
  uint64_t mask_ = 0, clear_ = 0, clear_at_target_ = 0;
};

}  // namespace indexsim::model
