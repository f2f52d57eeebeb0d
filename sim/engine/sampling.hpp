// SPDX-License-Identifier: Apache-2.0
// Fast-mode sampling of long kernels. A kernel of more than `max_waves` full waves first warms
// the caches with the CTAs it will not simulate (warm(): state only), then replays its last waves:
// up to `run_on_waves` of them (all, from a cold start, if it has no more), so that a sample still
// ramping up after max_waves runs on.
// The rest runs at the steady rate measured while the machine was full of it: the least-squares
// line through the times at which each whole wave's worth of CTAs had ended, never faster than the
// kernel's roofline. The sample stops early, once `min_waves` marks are in and the end that line
// predicts no longer moves (steady_end()): its CTAs not yet started are warmed instead, when the
// ones in flight have ended.
// A double-buffered kernel whose CTAs after the first wave all end on their math, not their memory
// (WaveSampling::math_bound_marks, math_bound_slack) repeats its waves exactly: its end is read on
// the line through the marks after the first, at whole waves (KernelState::math_paced), and it may
// stop once fewer of those marks are steady, even one that is not sampled but has waves beyond them.
// Each SM runs ceil(grid / SMs) CTAs' math one after another, so a partial last wave takes a full
// one's time, where a memory-bound kernel's shares the bandwidth among fewer CTAs.
// A pipelined GEMM that the rules above would replay whole (WaveSampling::gemm_waves) replays only
// its last gemm_waves full waves and its partial one, without warming: its first wave meets the
// caches as the kernel's own first wave would (a GEMM's later tiles read other panels than its
// first), its tail is simulated, not read off a line, and the caches end as its last tiles leave
// them. Each full wave left out takes the slope of the line through the sample's wave marks after
// the first: end = sample end + waves left out x slope.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/processor.hpp"
#include "models/common/steady_rate.hpp"
#include "models/common/time.hpp"
#include "sim/engine/kernel_state.hpp"

namespace indexsim::sim {

// CTAs simulated of a grid of `grid` CTAs whose full wave is `wave` CTAs.
inline uint64_t sampled_ctas(uint64_t grid, uint64_t wave, uint32_t max_waves) {
  return grid < uint64_t(max_waves) * wave ? grid : uint64_t(max_waves) * wave;
}

// When a sampled kernel ends, its last simulated CTA having ended at `now`.
model::Tick sampled_kernel_end(const KernelState& k, model::Tick now);

// The line through whole-wave marks and the steadiness test: models/common/steady_rate.hpp, shared
// with the processors' line marks.
using model::extrapolate_sampled_end;
using model::steady_end;

}  // namespace indexsim::sim
