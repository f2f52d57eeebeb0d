// SPDX-License-Identifier: Apache-2.0
// Fast-mode sampling of long kernels. A kernel of more than `max_waves` full waves first warms
// the caches with the CTAs it will not simulate (warm(): state only), then replays its last waves.
// The rest runs at the steady rate measured while the machine was full of it: the least-squares
// line through the times at which each whole wave's worth of CTAs had ended, never faster than the
// kernel's roofline. The sample stops early, once `min_waves` marks are in and the end that line
// predicts no longer moves (steady_end()): its CTAs not yet started are warmed instead, when the
// ones in flight have ended.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/processor.hpp"
#include "models/common/time.hpp"
#include "sim/engine/kernel_state.hpp"

namespace indexsim::sim {

// CTAs simulated of a grid of `grid` CTAs whose full wave is `wave` CTAs.
inline uint64_t sampled_ctas(uint64_t grid, uint64_t wave, uint32_t max_waves) {
  return grid < uint64_t(max_waves) * wave ? grid : uint64_t(max_waves) * wave;
}

// When a sampled kernel ends, its last simulated CTA having ended at `now`.
model::Tick sampled_kernel_end(const KernelState& k, model::Tick now);

// marks[i] is the time at which (i + 1) waves' worth of a kernel's sampled CTAs had ended, all while
// the machine was full; at least two. The least-squares line t = a + b x through the points
// (i + 1, marks[i]), its slope b floored at `min_ps_per_wave` (the kernel's roofline), at x = waves.
model::Tick extrapolate_sampled_end(const std::vector<model::Tick>& marks, double waves, double min_ps_per_wave);

// Whether a sample may stop at its marks so far: at least `min_waves` of them (and four), and the
// end predicted from all of them lies within `tolerance` (a fraction of the predicted duration after
// `start`) of the ends predicted without the first mark (the ramp while the caches fill) and without
// the latest one or two (a rhythm of a few waves: a copy's write drains, one wave in four faster).
// A kernel whose rate still drifts runs its whole sample.
bool steady_end(const std::vector<model::Tick>& marks, model::Tick start, double waves, double min_ps_per_wave,
                const model::WaveSampling& rule);

}  // namespace indexsim::sim
