// SPDX-License-Identifier: Apache-2.0
// The CPU references of the attention-path kernels against naive implementations written as
// directly from the definitions as possible (double precision, full sorts, exhaustive searches).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/numeric.hpp"
#include "kernels/cpu/reference.hpp"

namespace cpu = indexsim::kernels::cpu;
namespace num = indexsim::kernels::num;

namespace {

std::vector<float> randn(size_t n, uint32_t seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Nearest representable value by exhaustive search over a table of (value, code) sorted by value;
// a tie goes to the even code (last mantissa bit 0), a value beyond the largest finite one to `top`.
template <typename Code>
Code nearest_code(double a, const std::vector<std::pair<double, Code>>& table) {
  auto it = std::lower_bound(table.begin(), table.end(), std::make_pair(a, Code(0)),
                             [](const auto& x, const auto& y) { return x.first < y.first; });
  if (it == table.end()) return table.back().second;
  if (it == table.begin() || it->first == a) return it->second;
  auto lo = it - 1;
  const double dl = a - lo->first, dh = it->first - a;
  if (dl < dh) return lo->second;
  if (dh < dl) return it->second;
  return (lo->second & 1) ? it->second : lo->second;
}

std::vector<std::pair<double, uint8_t>> fp8_positive_table() {
  std::vector<std::pair<double, uint8_t>> t;
  for (int c = 0; c < 0x7F; ++c) {  // 0x7F is NaN
    const int E = c >> 3, M = c & 7;
    t.emplace_back(E == 0 ? M * std::ldexp(1.0, -9) : (8 + M) * std::ldexp(1.0, E - 10), uint8_t(c));
  }
  return t;
}

}  // namespace

TEST(KernelsCpuNumeric, Fp8DecodesEveryCodeAsSignExponentMantissa) {
  // value = (-1)^s · (E == 0 ? M/8 · 2^-6 : (1 + M/8) · 2^(E-7)); S.1111.111 is NaN
  for (int c = 0; c < 256; ++c) {
    const int s = c >> 7, E = (c >> 3) & 15, M = c & 7;
    const float v = num::fp8_e4m3_to_float(uint8_t(c));
    if (E == 15 && M == 7) {
      EXPECT_TRUE(std::isnan(v)) << c;
      continue;
    }
    const double mag = E == 0 ? M / 8.0 * std::ldexp(1.0, -6) : (1.0 + M / 8.0) * std::ldexp(1.0, E - 7);
    EXPECT_EQ(double(v), s ? -mag : mag) << "code " << c;
  }
  EXPECT_EQ(num::fp8_e4m3_to_float(0x7E), 448.0f);
}

TEST(KernelsCpuNumeric, Fp8EncodeIsNearestEvenAndSaturatesLikeAnExhaustiveSearch) {
  const auto table = fp8_positive_table();
  std::vector<float> probes = randn(20000, 1, 40.0f);
  for (size_t i = 0; i + 1 < table.size(); ++i) {  // every code, every midpoint and its neighbours
    const float mid = float((table[i].first + table[i + 1].first) / 2);
    probes.insert(probes.end(), {float(table[i].first), mid, std::nextafter(mid, 0.0f),
                                 std::nextafter(mid, 1e9f), -mid});
  }
  probes.insert(probes.end(), {0.0f, -0.0f, 448.0f, 449.0f, 464.0f, 1e30f, -1e30f, 1e-30f, 2e-3f});
  for (float x : probes) {
    const uint8_t want = uint8_t((std::signbit(x) ? 0x80 : 0) | nearest_code(std::fabs(double(x)), table));
    ASSERT_EQ(num::float_to_fp8_e4m3(x), want) << "x = " << x;
  }
  EXPECT_TRUE(std::isnan(num::fp8_e4m3_to_float(num::float_to_fp8_e4m3(NAN))));
}

TEST(KernelsCpuNumeric, Fp16EncodeIsNearestEvenLikeAnExhaustiveSearch) {
  std::vector<std::pair<double, uint16_t>> table;
  for (int c = 0; c < 0x7C00; ++c) {
    const int E = c >> 10, M = c & 1023;
    table.emplace_back(E == 0 ? M * std::ldexp(1.0, -24) : (1024 + M) * std::ldexp(1.0, E - 25), uint16_t(c));
    ASSERT_EQ(double(num::fp16_to_float(uint16_t(c))), table.back().first) << c;
  }
  std::vector<float> probes = randn(20000, 2, 3000.0f);
  for (size_t i = 0; i + 1 < table.size(); i += 7) {
    const float mid = float((table[i].first + table[i + 1].first) / 2);
    probes.insert(probes.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)});
  }
  probes.insert(probes.end(), {65504.0f, 65519.0f, 6e-8f, 3e-8f});
  for (float x : probes) {
    const uint16_t want = uint16_t((std::signbit(x) ? 0x8000 : 0) | nearest_code(std::fabs(double(x)), table));
    ASSERT_EQ(num::float_to_fp16(x), want) << "x = " << x;
  }
  EXPECT_EQ(num::float_to_fp16(65520.0f), 0x7C00);        // the midpoint above 65504 rounds to even = inf
  EXPECT_EQ(num::float_to_fp16(1e6f, true), 0x7BFF);       // saturating: the largest finite value
  EXPECT_EQ(num::float_to_fp16(-1e6f), 0xFC00);
}

TEST(KernelsCpuNumeric, Bf16EncodeIsNearestEvenOfTheTwoNeighbours) {
  for (float x : randn(50000, 3, 1e3f)) {
    const uint32_t u = num::float_bits(x);
    const uint16_t lo = uint16_t(u >> 16), hi = uint16_t(lo + 1);  // same sign: magnitude below / above
    const double dl = std::fabs(double(x) - num::bf16_to_float(lo)), dh = std::fabs(double(num::bf16_to_float(hi)) - x);
    const uint16_t want = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    ASSERT_EQ(num::float_to_bf16(x), want) << x;
  }
  EXPECT_EQ(num::float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // overflows to inf as IEEE
  EXPECT_EQ(num::float_to_bf16(std::numeric_limits<float>::max(), true), 0x7F7F);
}

TEST(KernelsCpuNumeric, OrderKeyPreservesFloatOrderAndEqualsZeroes) {
  std::vector<float> v = randn(5000, 4, 100.0f);
  v.insert(v.end(), {0.0f, -0.0f, INFINITY, -INFINITY, 1e-40f, -1e-40f});
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i; j < std::min(v.size(), i + 50); ++j) {
      ASSERT_EQ(v[i] < v[j], num::order_key(v[i]) < num::order_key(v[j])) << v[i] << " " << v[j];
      ASSERT_EQ(v[i] == v[j], num::order_key(v[i]) == num::order_key(v[j])) << v[i] << " " << v[j];
    }
  EXPECT_EQ(num::order_key(0.0f), num::order_key(-0.0f));
}

TEST(KernelsCpuReference, IndexerScoresEqualTheTripleLoopInDouble) {
  // I(s) = Σ_h w_h · max(0, Σ_d q[h][d] · k[s][d])
  const int H = 16, D = 64, N = 300;
  auto q = randn(H * D, 5), w = randn(H, 6), k = randn(size_t(N) * D, 7);
  const auto got = cpu::indexer_scores(q.data(), w.data(), H, D, k.data(), N);
  ASSERT_EQ(got.size(), size_t(N));
  int positive_heads = 0;
  for (int s = 0; s < N; ++s) {
    double want = 0;
    for (int h = 0; h < H; ++h) {
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += double(q[h * D + d]) * k[size_t(s) * D + d];
      positive_heads += dot > 0;
      want += w[h] * std::max(dot, 0.0);
    }
    EXPECT_NEAR(got[size_t(s)], want, 1e-4 * (1 + std::fabs(want))) << "key " << s;
  }
  EXPECT_GT(positive_heads, N * H / 4);  // the ReLU both passes and clips in this data
}

TEST(KernelsCpuReference, TopkEqualsAFullStableSortIncludingTiesAndShortRows) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> few(-20, 20);
  for (int trial = 0; trial < 6; ++trial) {
    const int n = trial < 3 ? 100000 : 1500;
    std::vector<float> s(static_cast<size_t>(n));
    for (auto& x : s) x = trial % 2 ? float(few(rng)) : std::ldexp(float(few(rng)), few(rng));  // many ties
    s[7] = -0.0f;
    s[9] = 0.0f;
    s[11] = -INFINITY;
    std::vector<int32_t> want(static_cast<size_t>(n));
    std::iota(want.begin(), want.end(), 0);
    std::stable_sort(want.begin(), want.end(), [&](int a, int b) { return s[size_t(a)] > s[size_t(b)]; });
    for (int k : {1, 2048, 4096}) {
      const auto got = cpu::topk(s, k);
      ASSERT_EQ(got.size(), size_t(std::min(k, n)));
      ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "trial " << trial << " k " << k;
    }
  }
  EXPECT_TRUE(cpu::topk({}, 5).empty());
  EXPECT_TRUE(cpu::topk({1.0f}, 0).empty());
}

TEST(KernelsCpuReference, SigmoidGatedPoolIsTheNormalisedGateWeightedSum) {
  // out[g] = Σ_i w_i v_i / Σ_i w_i, w_i = 1 / (1 + exp(-(Wh·h + Wv·v_i + b))); tail group of n % ratio rows
  const int D = 32, N = 10;
  cpu::PoolParams p;
  p.ratio = 4;
  p.gate_w = randn(2 * D, 9, 0.3f);
  p.gate_b = 0.25f;
  p.h = randn(D, 10);
  auto v = randn(size_t(N) * D, 11);
  const auto got = cpu::gated_pool(v.data(), N, D, p);
  ASSERT_EQ(got.size(), size_t(3 * D));
  for (int g = 0; g < 3; ++g) {
    const int len = std::min(4, N - 4 * g);
    std::vector<double> w(len);
    double wsum = 0;
    for (int i = 0; i < len; ++i) {
      double z = p.gate_b;
      for (int d = 0; d < D; ++d) z += double(p.gate_w[d]) * p.h[d] + double(p.gate_w[D + d]) * v[(4 * g + i) * D + d];
      w[i] = 1 / (1 + std::exp(-z));
      wsum += w[i];
    }
    for (int d = 0; d < D; ++d) {
      double want = 0;
      for (int i = 0; i < len; ++i) want += w[i] * v[(4 * g + i) * D + d] / wsum;
      EXPECT_NEAR(got[g * D + d], want, 1e-5) << "group " << g << " dim " << d;
    }
  }
}

TEST(KernelsCpuReference, SoftmaxGatedPoolWeightsSumToOneWithPositionBiases) {
  // w_i = exp(z_i) / Σ_j exp(z_j), z_i = Wv·v_i + ape[i]; out[g] = Σ_i w_i v_i
  const int D = 16, N = 8;
  cpu::PoolParams p;
  p.ratio = 4;
  p.gate = cpu::Gate::softmax;
  p.gate_w = randn(D, 12, 0.5f);
  p.ape = {0.5f, -1.0f, 2.0f, 0.0f};
  auto v = randn(size_t(N) * D, 13);
  const auto got = cpu::gated_pool(v.data(), N, D, p);
  for (int g = 0; g < 2; ++g) {
    double z[4], zs = 0;
    for (int i = 0; i < 4; ++i) {
      z[i] = p.ape[i];
      for (int d = 0; d < D; ++d) z[i] += double(p.gate_w[d]) * v[(4 * g + i) * D + d];
      zs += std::exp(z[i]);
    }
    for (int d = 0; d < D; ++d) {
      double want = 0;
      for (int i = 0; i < 4; ++i) want += std::exp(z[i]) / zs * v[(4 * g + i) * D + d];
      EXPECT_NEAR(got[g * D + d], want, 1e-5);
    }
  }
  cpu::PoolParams bad = p;
  bad.gate_w.pop_back();
  EXPECT_THROW(cpu::gated_pool(v.data(), N, D, bad), std::invalid_argument);
}

TEST(KernelsCpuReference, ProjectionEqualsTheMatrixProductInDouble) {
  // y[r][j] = Σ_i x[r][i] · P[i][j]
  const int N = 37, DI = 128, DO = 48;
  auto x = randn(size_t(N) * DI, 14), P = randn(size_t(DI) * DO, 15);
  const auto y = cpu::project(x.data(), N, DI, P.data(), DO);
  for (int r = 0; r < N; ++r)
    for (int j = 0; j < DO; ++j) {
      double want = 0;
      for (int i = 0; i < DI; ++i) want += double(x[r * DI + i]) * P[i * DO + j];
      ASSERT_NEAR(y[r * DO + j], want, 1e-4 * (1 + std::fabs(want)));
    }
}

TEST(KernelsCpuReference, SparseAttentionIsTheSoftmaxWeightedSumOverValidSelectedRows) {
  // o_h = Σ_j softmax_j(scale · q_h·K[idx_j]) V[idx_j] over idx_j >= 0; no valid row → zeros
  const int H = 4, DK = 24, DV = 16, ROWS = 200;
  auto q = randn(H * DK, 16), K = randn(size_t(ROWS) * DK, 17), V = randn(size_t(ROWS) * DV, 18);
  std::vector<int32_t> idx = {5, -1, 199, 0, 77, 77, -1, 123};
  const float scale = 1.0f / std::sqrt(float(DK));
  const auto o = cpu::sparse_attention(q.data(), H, DK, K.data(), V.data(), DV, idx, scale);
  for (int h = 0; h < H; ++h) {
    std::vector<double> s;
    for (int r : idx) {
      if (r < 0) continue;
      double d = 0;
      for (int c = 0; c < DK; ++c) d += double(q[h * DK + c]) * K[size_t(r) * DK + c];
      s.push_back(d * scale);
    }
    const double mx = *std::max_element(s.begin(), s.end());
    double z = 0;
    for (double x : s) z += std::exp(x - mx);
    for (int c = 0; c < DV; ++c) {
      double want = 0;
      size_t j = 0;
      for (int r : idx) {
        if (r >= 0) want += std::exp(s[j++] - mx) / z * V[size_t(r) * DV + c];
      }
      EXPECT_NEAR(o[h * DV + c], want, 1e-5);
    }
  }
  const auto none = cpu::sparse_attention(q.data(), H, DK, K.data(), V.data(), DV, {-1, -1}, scale);
  EXPECT_TRUE(std::all_of(none.begin(), none.end(), [](float x) { return x == 0.0f; }));
}

TEST(KernelsCpuReference, Fp8RowQuantisationErrorIsWithinHalfAQuantumOfEachValue) {
  // scale = max|x|/448; |x - dequant(x)| <= scale · (half the E4M3 spacing at |x|/scale), max maps to 448
  const int N = 50, D = 128;
  auto x = randn(size_t(N) * D, 19, 3.0f);
  std::fill(x.begin() + 10 * D, x.begin() + 11 * D, 0.0f);  // an all-zero row keeps scale 1
  const auto q = cpu::quantize_rows_fp8(x.data(), N, D);
  const auto y = cpu::dequantize_rows_fp8(q, D);
  EXPECT_EQ(q.scales[10], 1.0f);
  for (int r = 0; r < N; ++r) {
    float amax = 0;
    for (int d = 0; d < D; ++d) amax = std::max(amax, std::fabs(x[r * D + d]));
    for (int d = 0; d < D; ++d) {
      const double a = std::fabs(x[r * D + d]) / q.scales[r];
      const double spacing = a < std::ldexp(1.0, -6) ? std::ldexp(1.0, -9) : std::ldexp(1.0, int(std::floor(std::log2(a))) - 3);
      ASSERT_LE(std::fabs(double(x[r * D + d]) - y[r * D + d]), 0.5 * spacing * q.scales[r] * (1 + 1e-6))
          << "row " << r << " dim " << d;
      if (amax > 0 && std::fabs(x[r * D + d]) == amax) {
        EXPECT_EQ(std::fabs(num::fp8_e4m3_to_float(q.codes[r * D + d])), 448.0f);
      }
    }
  }
}

// The read-only stream's reference: chunk c holds the XOR of its little-endian 32-bit words.
// 12 words in chunks of 5 words (20 B): {w0..w4}, {w5..w9}, {w10, w11}; words are 1 << i, so a
// chunk's XOR is the OR of its bits.
TEST(KernelsCpuReference, XorWordsPerChunkFoldsEachChunkAndItsShortTail) {
  std::vector<uint8_t> bytes(12 * 4);
  for (uint32_t i = 0; i < 12; ++i)
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = uint8_t((uint32_t(1) << i) >> (8 * b));
  const auto x = cpu::xor_words_per_chunk(bytes.data(), bytes.size(), 20);
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0], 0x1Fu);
  EXPECT_EQ(x[1], 0x3E0u);
  EXPECT_EQ(x[2], 0xC00u);
  // A word seen twice cancels.
  std::vector<uint8_t> twice = {7, 0, 0, 0, 7, 0, 0, 0};
  EXPECT_EQ(cpu::xor_words_per_chunk(twice.data(), twice.size(), 8), std::vector<uint32_t>{0});
  EXPECT_THROW(cpu::xor_words_per_chunk(twice.data(), 6, 8), std::invalid_argument);
}
