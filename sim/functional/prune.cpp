// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/prune.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "kernels/cpu/reference.hpp"
#include "sim/functional/linalg.hpp"

namespace indexsim::sim::functional {

namespace cpu = kernels::cpu;

const char* name(PruneBasis b) {
  switch (b) {
    case PruneBasis::pca: return "pca";
    case PruneBasis::coords: return "coords";
    case PruneBasis::hadamard_coords: return "hadamard+coords";
    case PruneBasis::hadamard_pca: return "hadamard+pca";
  }
  return "?";
}

std::string describe(const PruneSpec& spec) {
  std::string out = name(spec.basis);
  if (spec.keep_dims > 0) {
    out += " keep " + std::to_string(spec.keep_dims);
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %g%% var", spec.variance_share * 100);
    out += buf;
  }
  if (spec.precision != Format::fp16) out += std::string(" ") + name(spec.precision);
  return out;
}

PruneFit fit_prune(const float* keys, int64_t tokens, int dim, PruneBasis basis) {
  if (tokens < 1) throw std::invalid_argument("prune: no keys to measure the variance on");
  const bool rotate = basis == PruneBasis::hadamard_coords || basis == PruneBasis::hadamard_pca;
  const size_t n = size_t(tokens), d = size_t(dim);
  PruneFit f;
  f.basis = basis;
  f.tokens = tokens;
  f.dim = dim;
  std::vector<float> x(keys, keys + n * d);
  if (rotate) {
    const std::vector<double> h = hadamard(dim);
    f.rotation.assign(h.begin(), h.end());
    x = cpu::project(x.data(), tokens, dim, f.rotation.data(), dim);
  }
  f.mean.assign(d, 0.0);
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < d; ++j) f.mean[j] += x[t * d + j];
  for (double& m : f.mean) m /= double(n);
  std::vector<double> cov(d * d, 0.0), c(d);
  for (size_t t = 0; t < n; ++t) {
    for (size_t j = 0; j < d; ++j) c[j] = x[t * d + j] - f.mean[j];
    for (size_t i = 0; i < d; ++i)
      for (size_t j = i; j < d; ++j) cov[i * d + j] += c[i] * c[j];
  }
  for (size_t i = 0; i < d; ++i)
    for (size_t j = i; j < d; ++j) cov[j * d + i] = cov[i * d + j] /= double(n);

  f.axes.assign(d * d, 0.0);
  f.variance.assign(d, 0.0);
  if (basis == PruneBasis::pca || basis == PruneBasis::hadamard_pca) {
    Eigen e = symmetric_eigen(cov, dim);
    f.axes = std::move(e.vectors);
    f.variance = std::move(e.values);
  } else {
    std::vector<int> order(d);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cov[a * d + a] > cov[b * d + b]; });
    for (size_t j = 0; j < d; ++j) {
      f.axes[size_t(order[j]) * d + j] = 1.0;
      f.variance[j] = cov[size_t(order[j]) * d + order[j]];
    }
  }
  f.centred.resize(n * d);
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < d; ++j) f.centred[t * d + j] = float(x[t * d + j] - f.mean[j]);
  return f;
}

int kept_dims(const PruneFit& fit, const PruneSpec& spec) {
  if (spec.keep_dims < 0 || spec.keep_dims > fit.dim)
    throw std::invalid_argument("prune: keep_dims must be in [0, " + std::to_string(fit.dim) + "]");
  if (spec.keep_dims > 0) return spec.keep_dims;
  if (!(spec.variance_share > 0 && spec.variance_share <= 1))
    throw std::invalid_argument("prune: variance_share must be in (0, 1]");
  double total = 0;
  for (double v : fit.variance) total += std::max(v, 0.0);
  double acc = 0;
  int kept = 0;
  while (kept < fit.dim && acc < spec.variance_share * total * (1 - 1e-12)) acc += std::max(fit.variance[size_t(kept++)], 0.0);
  return std::max(kept, 1);
}

Stored prune_keys(const PruneFit& fit, const PruneSpec& spec) {
  const int kept = kept_dims(fit, spec);
  const size_t n = size_t(fit.tokens), d = size_t(fit.dim), m = size_t(kept);
  // Store y = (x - mean) P, load mean + y Pᵀ.
  std::vector<float> P(d * m), Pt(m * d);
  for (size_t i = 0; i < d; ++i)
    for (size_t j = 0; j < m; ++j) Pt[j * d + i] = P[i * m + j] = float(fit.axes[i * d + j]);
  const double value_bytes = plain_value_bytes(spec.precision, "prune");
  const std::vector<float> y_raw = cpu::project(fit.centred.data(), fit.tokens, fit.dim, P.data(), kept);
  const std::vector<float> y = store_and_load(y_raw.data(), fit.tokens, kept, spec.precision);
  std::vector<float> rec = cpu::project(y.data(), fit.tokens, kept, Pt.data(), fit.dim);
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < d; ++j) rec[t * d + j] += float(fit.mean[j]);
  // The orthonormal Sylvester matrix is symmetric, so it is its own inverse.
  if (!fit.rotation.empty()) rec = cpu::project(rec.data(), fit.tokens, fit.dim, fit.rotation.data(), fit.dim);

  Stored s = Stored::per_token(std::move(rec), fit.tokens, fit.dim);
  s.stored_values = double(n) * double(m);
  s.bytes_per_value = value_bytes;
  // Once per layer: the mean, and for a PCA basis its kept axes (a coordinate choice is only indices,
  // and the Hadamard matrix is implied by the dimension).
  const bool pca = fit.basis == PruneBasis::pca || fit.basis == PruneBasis::hadamard_pca;
  s.extra_bytes = double((pca ? d * m : 0) + d) * s.bytes_per_value;
  s.kept_dims = kept;
  return s;
}

Stored prune_keys(const float* keys, int64_t tokens, int dim, const PruneSpec& spec) {
  return prune_keys(fit_prune(keys, tokens, dim, spec.basis), spec);
}

}  // namespace indexsim::sim::functional
