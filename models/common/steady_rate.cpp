// SPDX-License-Identifier: Apache-2.0
#include "models/common/steady_rate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/common/processor.hpp"

namespace indexsim::model {

namespace {
struct Line {
  double x_mean, t_mean, slope;
};
Line fit(const std::vector<Tick>& marks, size_t from, size_t to, double min_ps_per_unit) {
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
  return {x_mean, t_mean, std::max(min_ps_per_unit, sxt / sxx)};
}
}  // namespace

double fitted_end(const std::vector<Tick>& marks, size_t from, size_t to, double units, double min_ps_per_unit) {
  const Line l = fit(marks, from, to, min_ps_per_unit);
  return l.t_mean + l.slope * (units - l.x_mean);
}

double fitted_slope(const std::vector<Tick>& marks, size_t from, size_t to, double min_ps_per_unit) {
  if (to < from + 2) throw std::invalid_argument("fitted_slope: needs two marks");
  return fit(marks, from, to, min_ps_per_unit).slope;
}

Tick extrapolate_sampled_end(const std::vector<Tick>& marks, double units, double min_ps_per_unit) {
  if (marks.size() < 2) throw std::invalid_argument("extrapolate_sampled_end: needs two marks");
  return Tick(fitted_end(marks, 0, marks.size(), units, min_ps_per_unit));
}

bool steady_end(const std::vector<Tick>& marks, Tick start, double units, double min_ps_per_unit,
                const WaveSampling& rule) {
  const size_t n = marks.size();
  if (n < std::max<size_t>(4, rule.min_waves)) return false;
  const double all = fitted_end(marks, 0, n, units, min_ps_per_unit);
  const double span = (all - double(start)) * rule.steady_tolerance;
  // Without the first mark; without the latest one, and two.
  for (const auto& [from, to] : {std::pair<size_t, size_t>{1, n}, {0, n - 1}, {0, n - 2}})
    if (std::abs(fitted_end(marks, from, to, units, min_ps_per_unit) - all) > span) return false;
  return true;
}

}  // namespace indexsim::model
