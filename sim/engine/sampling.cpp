// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/sampling.hpp"

#include <algorithm>

namespace indexsim::sim {

using model::Tick;

Tick sampled_kernel_end(const KernelState& k, Tick now) {
  const auto& r = *k.rec;
  if (k.gemm_sample()) {
    // Its tail was simulated: the full waves left out add a wave's time each, the line's slope
    // through the marks after the first (the first wave's end holds the cold start).
    // Fewer than two marks (CTA slots still turning when a wave's last CTA started): the sample's
    // mean wave.
    const size_t n = k.wave_done.size(), from = n >= 3 ? 1 : 0;
    const double skipped = double((r.cta_count() - k.ctas_simulated) / k.wave);
    const double wave_ps = n >= 2 ? model::fitted_slope(k.wave_done, from, n, k.roofline_ps_per_wave())
                                  : std::max(k.roofline_ps_per_wave(),
                                             double(now - k.start) * double(k.wave) / double(k.ctas_simulated));
    return now + Tick(skipped * wave_ps);
  }
  // CTAs end in bursts whose rhythm spans several waves (a 1 GiB read-only stream: four or five waves
  // 4.3 us apart, then a short one), so the rate between two end points of a 10-wave sample put that
  // kernel 5.1 % above its detailed run; the fitted line, 1.0 %. Without two marks, at the sampled
  // average.
  if (k.math_paced())
    return std::max(now, Tick(model::fitted_end(k.wave_done, 1, k.wave_done.size(), k.whole_waves(), k.roofline_ps_per_wave())));
  if (k.wave_done.size() >= 2) {
    return std::max(now, extrapolate_sampled_end(k.wave_done, k.waves(), k.roofline_ps_per_wave()));
  }
  return k.start + Tick(double(now - k.start) * double(r.cta_count()) / double(k.ctas_simulated));
}

}  // namespace indexsim::sim
