// SPDX-License-Identifier: Apache-2.0
// Simulated time is an integer count of picoseconds. Each unit has its own clock domain, an integer
// period in picoseconds; Clock is the one conversion helper between cycles and time.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace indexsim::model {

using Tick = uint64_t;  // picoseconds
constexpr Tick kNever = std::numeric_limits<Tick>::max();
constexpr Tick kPsPerNs = 1000;

inline Tick ns_to_ps(double ns) { return static_cast<Tick>(std::llround(ns * 1000.0)); }
inline double ps_to_ns(Tick ps) { return static_cast<double>(ps) / 1000.0; }

// The sustained-rate window of a closed-loop run of `requests`: from the completion at 10 % of them
// to the one at 90 %, so that the fill at the start (every bank closed, queues filling) and the
// drain at the end (the last unit to finish sets the makespan) do not count.
struct SteadyWindow {
  explicit SteadyWindow(uint64_t requests) : lo(requests / 10), hi(requests - requests / 10) {}
  void on_completion(uint64_t completed, Tick t) {
    if (completed == lo) t_lo = t;
    if (completed == hi) t_hi = t;
  }
  uint64_t requests() const { return hi - lo; }
  Tick span_ps() const { return t_hi > t_lo ? t_hi - t_lo : 0; }
  uint64_t lo, hi;
  Tick t_lo = 0, t_hi = 0;
};

class Clock {
 public:
  Clock() = default;
  explicit Clock(double freq_MHz) : period_ps_(static_cast<Tick>(std::llround(1e6 / freq_MHz))) {}
  static Clock from_period_ps(Tick p) { Clock c; c.period_ps_ = p; return c; }
  Tick period_ps() const { return period_ps_; }
  double freq_MHz() const { return 1e6 / static_cast<double>(period_ps_); }
  Tick cycles(uint64_t n) const { return n * period_ps_; }
  // Cycles needed to cover a duration, rounded up (a constraint in ns becomes whole cycles).
  uint64_t cycles_ceil(double ns) const {
    return static_cast<uint64_t>(std::ceil(ns * 1000.0 / static_cast<double>(period_ps_) - 1e-9));
  }
  // The first clock edge at or after t.
  Tick edge_at_or_after(Tick t) const { return (t + period_ps_ - 1) / period_ps_ * period_ps_; }

 private:
  Tick period_ps_ = 1000;
};

}  // namespace indexsim::model
