// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/sampling.hpp"

#include <algorithm>

namespace indexsim::sim {

using model::Tick;

Tick sampled_kernel_end(const KernelState& k, Tick now) {
  // CTAs end in bursts whose rhythm spans several waves (a 1 GiB read-only stream: four or five waves
  // 4.3 us apart, then a short one), so the rate between two end points of a 10-wave sample put that
  // kernel 5.1 % above its detailed run; the fitted line, 1.0 %. Without two marks, at the sampled
  // average.
  const auto& r = *k.rec;
  if (k.math_paced())
    return std::max(now, Tick(model::fitted_end(k.wave_done, 1, k.wave_done.size(), k.whole_waves(), k.roofline_ps_per_wave())));
  if (k.wave_done.size() >= 2) {
    return std::max(now, extrapolate_sampled_end(k.wave_done, k.waves(), k.roofline_ps_per_wave()));
  }
  return k.start + Tick(double(now - k.start) * double(r.cta_count()) / double(k.ctas_simulated));
}

}  // namespace indexsim::sim
