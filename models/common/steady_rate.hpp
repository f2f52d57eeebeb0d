// SPDX-License-Identifier: Apache-2.0
// Whether a run of progress marks has reached its steady rate, and where that rate ends. Fast mode
// uses it twice: the engine marks a long kernel's whole waves (sim/engine/sampling.hpp), a processor
// marks a shorter kernel's lines (SmArray's steady projection). marks[i] is the time at which i + 1
// units of progress were done; a unit is a wave, or a 1/N of the kernel's lines.
#pragma once

#include <vector>

#include "models/common/time.hpp"

namespace indexsim::model {

struct WaveSampling;

// The least-squares line t = a + b x through the points (i + 1, marks[i]) for i in [from, to), its
// slope b floored at `min_ps_per_unit` (the kernel's roofline), at x = units. At least two marks.
double fitted_end(const std::vector<Tick>& marks, size_t from, size_t to, double units, double min_ps_per_unit);

// That line's slope b, in ps a unit (floored at `min_ps_per_unit`). At least two marks.
double fitted_slope(const std::vector<Tick>& marks, size_t from, size_t to, double min_ps_per_unit);

// fitted_end over every mark (at least two), as a time.
Tick extrapolate_sampled_end(const std::vector<Tick>& marks, double units, double min_ps_per_unit);

// Whether a sample may stop at its marks so far: at least `rule.min_waves` of them (and four), and the
// end predicted from all of them lies within `rule.steady_tolerance` (a fraction of the predicted
// duration after `start`) of the ends predicted without the first mark (the ramp while the caches
// fill) and without the latest one or two (a rhythm of a few units: a copy's write drains, one
// wave in four faster). A kernel whose rate still drifts runs on.
bool steady_end(const std::vector<Tick>& marks, Tick start, double units, double min_ps_per_unit,
                const WaveSampling& rule);

}  // namespace indexsim::model
