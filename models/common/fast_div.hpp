// SPDX-License-Identifier: Apache-2.0
// Exact division of 64-bit unsigned numbers by a divisor fixed at construction, as a multiply and
// shifts instead of a 64-bit `div` (tens of cycles): the L2 and the crossbar hash every line to a
// slice, a set and a port, four or five such divisions a line.
//
// Granlund & Montgomery, "Division by invariant integers using multiplication" (PLDI 1994),
// Figure 4.1: for 1 <= d < 2^64, l = ceil(log2 d), m = floor(2^64 (2^l - d) / d) + 1, and
//   t = mulhi(m, n);  q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).
#pragma once

#include <cstdint>
#include <stdexcept>

namespace indexsim::model {

class FastDiv {
 public:
  FastDiv() : FastDiv(1) {}
  explicit FastDiv(uint64_t d) : d_(d) {
    if (d == 0) throw std::invalid_argument("FastDiv: division by zero");
    int l = 0;
    while (l < 64 && (uint64_t(1) << l) < d) ++l;
    const unsigned __int128 two_l = static_cast<unsigned __int128>(1) << l;
    m_ = static_cast<uint64_t>(((two_l - d) << 64) / d + 1);
    sh1_ = l < 1 ? l : 1;
    sh2_ = l > 1 ? l - 1 : 0;
  }
  uint64_t div(uint64_t n) const {
    const auto t = static_cast<uint64_t>((static_cast<unsigned __int128>(m_) * n) >> 64);
    return (t + ((n - t) >> sh1_)) >> sh2_;
  }
  uint64_t mod(uint64_t n) const { return n - div(n) * d_; }
  uint64_t divisor() const { return d_; }

 private:
  uint64_t d_, m_ = 0;
  int sh1_ = 0, sh2_ = 0;
};

}  // namespace indexsim::model
