// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/hash.hpp"

#include <cmath>
#include <stdexcept>

#include "kernels/cpu/numeric.hpp"
#include "sim/functional/rng.hpp"

namespace indexsim::sim::functional {

std::string describe(const HashSpec& h) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d sign bits + fp16 norm (%.0f B)", h.bits, hash_bytes_per_token(h));
  return buf;
}

double hash_bytes_per_token(const HashSpec& h) { return h.bits / 8.0 + 2.0; }

Stored hash_keys(const float* keys, int64_t tokens, int dim, const HashSpec& h) {
  if (h.bits < 1 || h.bits % 8) throw std::invalid_argument("hash_keys: bits must be a positive multiple of 8, not " + std::to_string(h.bits));
  const std::vector<float> r = gaussian(size_t(h.bits) * size_t(dim), h.seed);
  const double scale = std::sqrt(M_PI / 2.0) / h.bits;
  std::vector<float> out(size_t(tokens) * size_t(dim), 0.0f);
  std::vector<double> acc(static_cast<size_t>(dim));
  for (int64_t t = 0; t < tokens; ++t) {
    const float* k = keys + t * dim;
    double norm2 = 0;
    for (int j = 0; j < dim; ++j) norm2 += double(k[j]) * k[j];
    // The norm as the cache keeps it (FP16).
    const double norm = kernels::num::fp16_to_float(kernels::num::float_to_fp16(float(std::sqrt(norm2)), true));
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int i = 0; i < h.bits; ++i) {
      const float* ri = r.data() + size_t(i) * size_t(dim);
      double p = 0;
      for (int j = 0; j < dim; ++j) p += double(ri[j]) * k[j];
      const double s = p >= 0 ? 1.0 : -1.0;
      for (int j = 0; j < dim; ++j) acc[size_t(j)] += s * ri[j];
    }
    for (int j = 0; j < dim; ++j) out[size_t(t * dim + j)] = float(norm * scale * acc[size_t(j)]);
  }
  Stored s = Stored::per_token(std::move(out), tokens, dim);
  s.stored_values = double(tokens);
  s.bytes_per_value = hash_bytes_per_token(h);
  return s;
}

}  // namespace indexsim::sim::functional
