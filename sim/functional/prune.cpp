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
  if (spec.keep_dims > 0) return out + " keep " + std::to_string(spec.keep_dims);
  char buf[32];
  std::snprintf(buf, sizeof buf, " %g%% var", spec.variance_share * 100);
  return out + buf;
}

Stored prune_keys(const float* keys, int64_t tokens, int dim, const PruneSpec& spec) {
  if (tokens < 1) throw std::invalid_argument("prune: no keys to measure the variance on");
  if (spec.keep_dims < 0 || spec.keep_dims > dim)
    throw std::invalid_argument("prune: keep_dims must be in [0, " + std::to_string(dim) + "]");
  if (spec.keep_dims == 0 && !(spec.variance_share > 0 && spec.variance_share <= 1))
    throw std::invalid_argument("prune: variance_share must be in (0, 1]");
  const bool rotate = spec.basis == PruneBasis::hadamard_coords || spec.basis == PruneBasis::hadamard_pca;
  const size_t n = size_t(tokens), d = size_t(dim);

  std::vector<float> hf;
  std::vector<float> x(keys, keys + n * d);
  if (rotate) {
    const std::vector<double> h = hadamard(dim);
    hf.assign(h.begin(), h.end());
    x = cpu::project(x.data(), tokens, dim, hf.data(), dim);
  }
  std::vector<double> mean(d, 0.0);
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < d; ++j) mean[j] += x[t * d + j];
  for (double& m : mean) m /= double(n);
  std::vector<double> cov(d * d, 0.0);
  std::vector<double> c(d);
  for (size_t t = 0; t < n; ++t) {
    for (size_t j = 0; j < d; ++j) c[j] = x[t * d + j] - mean[j];
    for (size_t i = 0; i < d; ++i)
      for (size_t j = i; j < d; ++j) cov[i * d + j] += c[i] * c[j];
  }
  for (size_t i = 0; i < d; ++i)
    for (size_t j = i; j < d; ++j) cov[j * d + i] = cov[i * d + j] /= double(n);

  // basis: d × d, columns ordered by the variance they carry
  std::vector<double> basis(d * d, 0.0), var(d);
  if (spec.basis == PruneBasis::pca || spec.basis == PruneBasis::hadamard_pca) {
    const Eigen e = symmetric_eigen(cov, dim);
    basis = e.vectors;
    var = e.values;
  } else {
    std::vector<int> order(d);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cov[a * d + a] > cov[b * d + b]; });
    for (size_t j = 0; j < d; ++j) {
      basis[size_t(order[j]) * d + j] = 1.0;
      var[j] = cov[size_t(order[j]) * d + order[j]];
    }
  }
  int kept = spec.keep_dims;
  if (kept == 0) {
    double total = 0;
    for (double v : var) total += std::max(v, 0.0);
    double acc = 0;
    while (kept < dim && acc < spec.variance_share * total * (1 - 1e-12)) acc += std::max(var[size_t(kept++)], 0.0);
    kept = std::max(kept, 1);
  }

  // Store y = (x - mean) P, load mean + y Pᵀ.
  const size_t m = size_t(kept);
  std::vector<float> P(d * m), Pt(m * d), xc(n * d);
  for (size_t i = 0; i < d; ++i)
    for (size_t j = 0; j < m; ++j) Pt[j * d + i] = P[i * m + j] = float(basis[i * d + j]);
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < d; ++j) xc[t * d + j] = float(x[t * d + j] - mean[j]);
  const std::vector<float> y = cpu::project(xc.data(), tokens, dim, P.data(), kept);
  std::vector<float> rec = cpu::project(y.data(), tokens, kept, Pt.data(), dim);
  for (size_t t = 0; t < n; ++t)
    for (size_t j = 0; j < d; ++j) rec[t * d + j] += float(mean[j]);
  if (rotate) rec = cpu::project(rec.data(), tokens, dim, hf.data(), dim);  // H is its own inverse

  Stored s = Stored::per_token(std::move(rec), tokens, dim);
  s.stored_values = double(n) * double(m);
  s.extra_bytes = double(d * m + d) * s.bytes_per_value;  // the basis and the mean, once per layer
  s.kept_dims = kept;
  return s;
}

}  // namespace indexsim::sim::functional
