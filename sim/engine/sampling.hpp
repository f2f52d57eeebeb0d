// SPDX-License-Identifier: Apache-2.0
// Fast-mode sampling of long kernels. A kernel of more than `sample_waves` full waves first warms
// the caches with the CTAs it will not simulate (warm(): state only), then replays its last waves.
// The rest runs at the steady rate measured while the machine was full of it: the least-squares
// line through the times at which each whole wave's worth of CTAs had ended, never faster than the
// kernel's roofline.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/time.hpp"
#include "sim/engine/kernel_state.hpp"

namespace indexsim::sim {

// CTAs simulated of a grid of `grid` CTAs whose full wave is `wave` CTAs.
inline uint64_t sampled_ctas(uint64_t grid, uint64_t wave, uint32_t sample_waves) {
  return grid < uint64_t(sample_waves) * wave ? grid : uint64_t(sample_waves) * wave;
}

// When a sampled kernel ends, its last simulated CTA having ended at `now`.
model::Tick sampled_kernel_end(const KernelState& k, model::Tick now);

// marks[i] is the time at which (i + 1) waves' worth of a kernel's sampled CTAs had ended, all while
// the machine was full; at least two. The least-squares line t = a + b x through the points
// (i + 1, marks[i]), its slope b floored at `min_ps_per_wave` (the kernel's roofline), at x = waves.
model::Tick extrapolate_sampled_end(const std::vector<model::Tick>& marks, double waves, double min_ps_per_wave);

}  // namespace indexsim::sim
