// SPDX-License-Identifier: Apache-2.0
#include "kernels/cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "kernels/cpu/numeric.hpp"

namespace indexsim::kernels::cpu {

namespace {

// Eight independent partial sums let the compiler vectorise a float dot product without
// -ffast-math (a single running sum is a serial dependence it may not reorder).
float dot(const float* a, const float* b, int n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += a[i + j] * b[i + j];
  float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) t += a[i] * b[i];
  return t;
}

void require(bool ok, const char* fn, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string("kernels::cpu::") + fn + ": " + what);
}

}  // namespace

std::vector<float> indexer_scores(const float* q, const float* w, int heads, int dim, const float* keys,
                                  int64_t n) {
  require(heads > 0 && dim > 0 && n >= 0, "indexer_scores", "heads and dim must be positive, n >= 0");
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t s = 0; s < n; ++s) {
    const float* k = keys + s * dim;
    float acc = 0.0f;
    for (int h = 0; h < heads; ++h) acc += w[h] * std::max(dot(q + size_t(h) * dim, k, dim), 0.0f);
    out[size_t(s)] = acc;
  }
  return out;
}

std::vector<int32_t> topk(const std::vector<float>& scores, int k) {
  const int64_t n = int64_t(scores.size());
  const int64_t m = std::max<int64_t>(0, std::min<int64_t>(k, n));
  require(n <= std::numeric_limits<int32_t>::max(), "topk", "more than 2^31 - 1 scores");
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  auto before = [&](int32_t a, int32_t b) {
    const float x = scores[size_t(a)], y = scores[size_t(b)];
    return x > y || (x == y && a < b);
  };
  // nth_element then a sort of the head: O(n + k log k), what a 1M-score row needs
  if (m < n) std::nth_element(idx.begin(), idx.begin() + m, idx.end(), before);
  idx.resize(size_t(m));
  std::sort(idx.begin(), idx.end(), before);
  return idx;
}

std::vector<float> gated_pool(const float* rows, int64_t n, int dim, const PoolParams& p) {
  require(p.ratio >= 1, "gated_pool", "ratio must be >= 1, got " + std::to_string(p.ratio));
  const bool sig = p.gate == Gate::sigmoid;
  require(p.gate_w.size() == size_t(sig ? 2 * dim : dim), "gated_pool",
          "gate_w must hold " + std::to_string(sig ? 2 * dim : dim) + " values, has " +
              std::to_string(p.gate_w.size()));
  require(p.h.empty() || p.h.size() == size_t(dim), "gated_pool", "h must be empty or hold dim values");
  require(p.ape.empty() || p.ape.size() == size_t(p.ratio), "gated_pool", "ape must be empty or hold ratio values");
  const int64_t groups = (n + p.ratio - 1) / p.ratio;
  std::vector<float> out(size_t(groups * dim), 0.0f);
  // The h half of the sigmoid gate is the same for every row of every group.
  const float hdot = sig && !p.h.empty() ? dot(p.gate_w.data(), p.h.data(), dim) : 0.0f;
  std::vector<float> wt(size_t(p.ratio));
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t first = g * p.ratio;
    const int len = int(std::min<int64_t>(p.ratio, n - first));
    for (int i = 0; i < len; ++i) {
      const float* v = rows + (first + i) * dim;
      if (sig) {
        wt[size_t(i)] = 1.0f / (1.0f + std::exp(-(hdot + dot(p.gate_w.data() + dim, v, dim) + p.gate_b)));
      } else {
        wt[size_t(i)] = dot(p.gate_w.data(), v, dim) + (p.ape.empty() ? 0.0f : p.ape[size_t(i)]);
      }
    }
    if (!sig) {  // softmax over the group's logits, max-subtracted
      const float mx = *std::max_element(wt.begin(), wt.begin() + len);
      for (int i = 0; i < len; ++i) wt[size_t(i)] = std::exp(wt[size_t(i)] - mx);
    }
    float wsum = 0.0f;
    for (int i = 0; i < len; ++i) wsum += wt[size_t(i)];
    float* o = out.data() + g * dim;
    for (int i = 0; i < len; ++i) {
      const float* v = rows + (first + i) * dim;
      const float c = wt[size_t(i)] / wsum;
      for (int d = 0; d < dim; ++d) o[d] += c * v[d];
    }
  }
  return out;
}

std::vector<float> project(const float* x, int64_t n, int dim_in, const float* P, int dim_out) {
  require(dim_in > 0 && dim_out > 0 && n >= 0, "project", "dims must be positive, n >= 0");
  std::vector<float> y(size_t(n * dim_out), 0.0f);
  for (int64_t r = 0; r < n; ++r) {
    float* yr = y.data() + r * dim_out;
    for (int i = 0; i < dim_in; ++i) {  // row of P streamed contiguously: the inner loop vectorises
      const float xi = x[r * dim_in + i];
      const float* pr = P + size_t(i) * dim_out;
      for (int j = 0; j < dim_out; ++j) yr[j] += xi * pr[j];
    }
  }
  return y;
}

std::vector<float> sparse_attention(const float* q, int heads, int dk, const float* K, const float* V, int dv,
                                    const std::vector<int32_t>& idx, float scale) {
  require(heads > 0 && dk > 0 && dv > 0, "sparse_attention", "heads, dk and dv must be positive");
  std::vector<float> out(size_t(heads) * dv, 0.0f);
  std::vector<float> s(idx.size());
  for (int h = 0; h < heads; ++h) {
    const float* qh = q + size_t(h) * dk;
    float mx = -std::numeric_limits<float>::infinity();
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0) continue;
      s[j] = scale * dot(qh, K + size_t(idx[j]) * dk, dk);
      mx = std::max(mx, s[j]);
    }
    if (mx == -std::numeric_limits<float>::infinity()) continue;  // no valid row (or all scores -inf)
    float sum = 0.0f;
    float* o = out.data() + size_t(h) * dv;
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0) continue;
      const float p = std::exp(s[j] - mx);
      sum += p;
      const float* v = V + size_t(idx[j]) * dv;
      for (int d = 0; d < dv; ++d) o[d] += p * v[d];
    }
    for (int d = 0; d < dv; ++d) o[d] /= sum;
  }
  return out;
}

Fp8Rows quantize_rows_fp8(const float* x, int64_t n, int dim) {
  Fp8Rows q;
  q.codes.resize(size_t(n * dim));
  q.scales.resize(size_t(n));
  for (int64_t r = 0; r < n; ++r) {
    float amax = 0.0f;
    for (int d = 0; d < dim; ++d) amax = std::max(amax, std::fabs(x[r * dim + d]));
    const float scale = amax > 0.0f ? amax / num::kFp8E4M3Max : 1.0f;
    q.scales[size_t(r)] = scale;
    for (int d = 0; d < dim; ++d) q.codes[size_t(r * dim + d)] = num::float_to_fp8_e4m3(x[r * dim + d] / scale);
  }
  return q;
}

std::vector<float> dequantize_rows_fp8(const Fp8Rows& q, int dim) {
  std::vector<float> x(q.codes.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = num::fp8_e4m3_to_float(q.codes[i]) * q.scales[i / size_t(dim)];
  return x;
}

std::vector<uint32_t> xor_words_per_chunk(const uint8_t* data, uint64_t bytes, uint64_t chunk_bytes) {
  if (bytes % 4 || chunk_bytes == 0 || chunk_bytes % 4)
    throw std::invalid_argument("xor_words_per_chunk: bytes and chunk_bytes must be multiples of 4 (chunk > 0)");
  std::vector<uint32_t> out((bytes + chunk_bytes - 1) / chunk_bytes, 0);
  for (uint64_t i = 0; i < bytes; i += 4) {
    const uint32_t w = uint32_t(data[i]) | uint32_t(data[i + 1]) << 8 | uint32_t(data[i + 2]) << 16 |
                       uint32_t(data[i + 3]) << 24;
    out[i / chunk_bytes] ^= w;
  }
  return out;
}

std::vector<float> round_bf16(const float* x, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[size_t(i)] = num::bf16_to_float(num::float_to_bf16(x[i]));
  return y;
}

std::vector<float> round_fp16(const float* x, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[size_t(i)] = num::fp16_to_float(num::float_to_fp16(x[i]));
  return y;
}

}  // namespace indexsim::kernels::cpu
