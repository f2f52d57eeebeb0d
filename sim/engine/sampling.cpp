// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace indexsim::sim {

using model::Tick;

Tick sampled_kernel_end(const KernelState& k, Tick now) {
  // CTAs end in bursts whose rhythm spans several waves (a 1 GiB read-only stream: four or five waves
  // 4.3 us apart, then a short one), so the rate between two end points of a 10-wave sample put that
  // kernel 5.1 % above its detailed run; the fitted line, 1.0 %. Without two marks, at the sampled
  // average.
  const auto& r = *k.rec;
  if (k.wave_done.size() >= 2) {
    return std::max(now, extrapolate_sampled_end(k.wave_done, k.waves(), k.roofline_ps_per_wave()));
  }
  return k.start + Tick(double(now - k.start) * double(r.cta_count()) / double(k.ctas_simulated));
}

namespace {
// The line t = a + b x through the points (i + 1, marks[i]) for i in [from, to), b floored at
// `min_ps_per_wave`, at x = waves.
double line_end(const std::vector<Tick>& marks, size_t from, size_t to, double waves, double min_ps_per_wave) {
  const double n = double(to - from), x_mean = double(from + to + 1) / 2;
  double t_mean = 0;
  for (size_t i = from; i < to; ++i) t_mean += double(marks[i]);
  t_mean /= n;
  double sxt = 0, sxx = 0;
  for (size_t i = from; i < to; ++i) {
    const double dx = double(i + 1) - x_mean;
    sxt += dx * (double(marks[i]) - t_mean);
    sxx += dx * dx;
  }
  const double per_wave = std::max(min_ps_per_wave, sxt / sxx);
  return t_mean + per_wave * (waves - x_mean);
}
}  // namespace

Tick extrapolate_sampled_end(const std::vector<Tick>& marks, double waves, double min_ps_per_wave) {
  if (marks.size() < 2) throw std::invalid_argument("extrapolate_sampled_end: needs two wave marks");
  return Tick(line_end(marks, 0, marks.size(), waves, min_ps_per_wave));
}

bool steady_end(const std::vector<Tick>& marks, Tick start, double waves, double min_ps_per_wave,
                const model::WaveSampling& rule) {
  const size_t n = marks.size();
  if (n < std::max<size_t>(4, rule.min_waves)) return false;
  const double all = line_end(marks, 0, n, waves, min_ps_per_wave);
  const double span = (all - double(start)) * rule.steady_tolerance;
  // Without the first mark; without the latest one, and two.
  for (const auto& [from, to] : {std::pair<size_t, size_t>{1, n}, {0, n - 1}, {0, n - 2}})
    if (std::abs(line_end(marks, from, to, waves, min_ps_per_wave) - all) > span) return false;
  return true;
}

}  // namespace indexsim::sim
