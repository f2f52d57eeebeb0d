// SPDX-License-Identifier: Apache-2.0
// The functional (accuracy) models of the indexer-cache techniques, on small hand-made inputs
// where the answer follows from a formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sim/functional/accuracy.hpp"
#include "sim/functional/linalg.hpp"
#include "sim/functional/npy.hpp"
#include "sim/functional/rng.hpp"

using namespace indexsim::sim::functional;
using indexsim::kernels::cpu::Gate;

namespace {

std::vector<float> repeat_rows(const std::vector<float>& row, int n) {
  std::vector<float> out;
  for (int i = 0; i < n; ++i) out.insert(out.end(), row.begin(), row.end());
  return out;
}

}  // namespace

// Σ w_i v / Σ w_i = v whatever the gate's weights: pooling copies of one vector returns it.
TEST(FunctionalPool, FourIdenticalVectorsPoolToThatVectorOnBothAxes) {
  const std::vector<float> v = gaussian(8, 7);
  for (Gate g : {Gate::sigmoid, Gate::softmax}) {
    const PoolSpec tokens{4, PoolAxis::tokens, g, GateInit::random, 3, 0, Format::fp32};
    const std::vector<float> keys = repeat_rows(v, 4);
    const Stored s = pool_keys(keys.data(), 4, 8, 1, tokens, 0);
    ASSERT_EQ(s.entries(), 1);
    for (int j = 0; j < 8; ++j) EXPECT_NEAR(s.keys[size_t(j)], v[size_t(j)], 1e-6f);

    // Along vectors: one token whose 4 vectors (of 2 dims) are all v[0..1].
    const std::vector<float> token = repeat_rows({v[0], v[1]}, 4);
    const PoolSpec vectors{4, PoolAxis::vectors, g, GateInit::random, 3, 0, Format::fp32};
    const Stored t = pool_keys(token.data(), 1, 8, 4, vectors, 0);
    for (int j = 0; j < 8; ++j) EXPECT_NEAR(t.keys[size_t(j)], token[size_t(j)], 1e-6f);
  }
}

// Uniform gates weigh every member alike: the pooled key is the plain mean of its group.
TEST(FunctionalPool, UniformGateIsTheMeanOfTheGroup) {
  const std::vector<float> keys = {1, 2, 3, 4, 5, 6, 7, 8};  // 4 tokens × 2 dims
  const Stored s = pool_keys(keys.data(), 4, 2, 1, {2, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0}, 0);
  ASSERT_EQ(s.entries(), 2);
  EXPECT_FLOAT_EQ(s.keys[0], 2.0f);  // (1 + 3) / 2
  EXPECT_FLOAT_EQ(s.keys[1], 3.0f);  // (2 + 4) / 2
  EXPECT_FLOAT_EQ(s.keys[2], 6.0f);
  EXPECT_FLOAT_EQ(s.keys[3], 7.0f);
}

// 10 tokens, ratio 4, no recent window: groups [0,4) [4,8) and the tail pool [8,10), always selected;
// the cache holds ceil(10/4) = 3 keys.
TEST(FunctionalPool, TokensAxisGroupsCoverRangesAndTheShortTailIsAlwaysSelected) {
  const std::vector<float> keys = gaussian(10 * 4, 1);
  const Stored s = pool_keys(keys.data(), 10, 4, 1, {4, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0}, 0);
  EXPECT_EQ(s.begin, (std::vector<int64_t>{0, 4, 8, 10}));
  EXPECT_EQ(s.always, (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_DOUBLE_EQ(s.stored_values, 3 * 4);
}

// recent_full = 2 of 10 tokens: history 8 = 2 groups of 4, then 2 tokens kept whole; stored keys
// 2 + 2 = 4, and the recent keys are the originals.
TEST(FunctionalPool, RecentWindowStaysUnpooled) {
  const std::vector<float> keys = gaussian(10 * 4, 2);
  const Stored s = pool_keys(keys.data(), 10, 4, 1, {4, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 2}, 0);
  EXPECT_EQ(s.begin, (std::vector<int64_t>{0, 4, 8, 9, 10}));
  EXPECT_EQ(s.always, (std::vector<uint8_t>{0, 0, 0, 0}));
  for (int j = 0; j < 8; ++j) EXPECT_EQ(s.keys[size_t(2 * 4 + j)], keys[size_t(8 * 4 + j)]);
  EXPECT_DOUBLE_EQ(s.stored_values, 4 * 4);
}

// Pooling 4 vectors of a token 2:1 stores 2 vectors per token: half the values.
TEST(FunctionalPool, VectorsAxisTwoToOneStoresHalfAndSharesEachPairsVector) {
  const std::vector<float> keys = gaussian(3 * 8, 4);  // 3 tokens × 4 vectors × 2 dims
  const Stored s = pool_keys(keys.data(), 3, 8, 4, {2, PoolAxis::vectors, Gate::sigmoid, GateInit::uniform, 1, 0, Format::fp32}, 0);
  EXPECT_EQ(s.entries(), 3);
  EXPECT_DOUBLE_EQ(s.stored_values, 3 * 2 * 2);
  for (int t = 0; t < 3; ++t)
    for (int j = 0; j < 2; ++j) {
      const float mean01 = (keys[size_t(t * 8 + j)] + keys[size_t(t * 8 + 2 + j)]) / 2;
      EXPECT_NEAR(s.keys[size_t(t * 8 + j)], mean01, 1e-6f);
      EXPECT_NEAR(s.keys[size_t(t * 8 + 2 + j)], mean01, 1e-6f);
    }
}

// The tail pool's 2 tokens count against the budget: k = 6 takes them and the best group of 4.
TEST(FunctionalSelect, PooledSelectionTakesTheTailThenWholeGroupsByScore) {
  const std::vector<float> keys = gaussian(10 * 4, 1);
  const Stored s = pool_keys(keys.data(), 10, 4, 1, {4, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0}, 0);
  const std::vector<int32_t> sel = select_tokens(s, {0.1f, 0.9f, -5.0f}, 6);
  EXPECT_EQ(sel, (std::vector<int32_t>{8, 9, 4, 5, 6, 7}));
}

// Storing the keys unchanged selects exactly the exact indexer's top-k: recall 1 at every k.
TEST(FunctionalSelect, ExactMethodHasRecallOne) {
  const VectorSet v = random_vectors(1, 300, 5, 16, 4, 11);
  for (ScoreMode mode : {ScoreMode::dot, ScoreMode::relu_heads}) {
    EvalOptions opt;
    opt.ks = {1, 7, 64, 300};
    opt.score = mode;
    const CaseResult r = run_study(v, {Case::exact()}, opt)[0];
    for (double x : r.recall) EXPECT_DOUBLE_EQ(x, 1.0);
    EXPECT_NEAR(r.key_cos, 1.0, 1e-12);
    EXPECT_NEAR(r.score_cos, 1.0, 1e-12);
  }
}

// ReLU(x) - ReLU(-x) = x: the dot mode's two-head trick gives q·k.
TEST(FunctionalSelect, DotModeScoresAreTheDotProduct) {
  const std::vector<float> q = gaussian(8, 5), k = gaussian(3 * 8, 6);
  const std::vector<float> s = scores(q.data(), 8, 2, ScoreMode::dot, k.data(), 3);
  for (int t = 0; t < 3; ++t) {
    double d = 0;
    for (int j = 0; j < 8; ++j) d += double(q[size_t(j)]) * k[size_t(t * 8 + j)];
    EXPECT_NEAR(s[size_t(t)], d, 1e-5);
  }
}

// [[2,1],[1,2]] has eigenvalues 3 and 1 with eigenvectors (1,1)/√2 and (1,-1)/√2.
TEST(FunctionalLinalg, JacobiFindsTheEigenpairsOfAKnownMatrix) {
  const Eigen e = symmetric_eigen({2, 1, 1, 2}, 2);
  EXPECT_NEAR(e.values[0], 3.0, 1e-12);
  EXPECT_NEAR(e.values[1], 1.0, 1e-12);
  EXPECT_NEAR(std::fabs(e.vectors[0]), M_SQRT1_2, 1e-12);
  EXPECT_NEAR(e.vectors[0], e.vectors[2], 1e-12);  // column 0 = (1, 1)/√2 up to sign
}

// H Hᵀ = I for the scaled Sylvester matrix.
TEST(FunctionalLinalg, HadamardIsOrthonormal) {
  const int n = 16;
  const std::vector<double> h = hadamard(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double d = 0;
      for (int k = 0; k < n; ++k) d += h[size_t(i * n + k)] * h[size_t(j * n + k)];
      EXPECT_NEAR(d, i == j ? 1.0 : 0.0, 1e-12);
    }
  EXPECT_THROW(hadamard(12), std::invalid_argument);
}

// Keeping all principal axes is a change of basis and back: the keys come back exactly (to float rounding).
TEST(FunctionalPrune, PcaKeepingAllDimsReconstructsExactly) {
  const int n = 200, d = 16;
  std::vector<float> keys = gaussian(size_t(n * d), 9);
  for (int t = 0; t < n; ++t) keys[size_t(t * d + 1)] += 3 * keys[size_t(t * d)];  // correlated axes
  for (PruneBasis b : {PruneBasis::pca, PruneBasis::hadamard_pca, PruneBasis::coords, PruneBasis::hadamard_coords}) {
    const Stored s = prune_keys(keys.data(), n, d, {b, 0, d, Format::fp32});
    EXPECT_EQ(s.kept_dims, d);
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_NEAR(s.keys[i], keys[i], 1e-4f) << name(b);
  }
}

// Variance only along 2 coordinates: a 90 % target keeps at most those 2 axes and loses nothing.
TEST(FunctionalPrune, DataOnTwoAxesKeepsTwoDimsAndReconstructsExactly) {
  const int n = 100, d = 8;
  std::vector<float> keys(size_t(n * d), 0.5f);
  const std::vector<float> g = gaussian(size_t(2 * n), 3);
  for (int t = 0; t < n; ++t) {
    keys[size_t(t * d + 2)] += 4 * g[size_t(2 * t)];
    keys[size_t(t * d + 5)] += 1 * g[size_t(2 * t + 1)];
  }
  const Stored s = prune_keys(keys.data(), n, d, {PruneBasis::pca, 0.99, 0});
  EXPECT_LE(s.kept_dims, 2);
  const Stored c = prune_keys(keys.data(), n, d, {PruneBasis::coords, 1.0, 0, Format::fp32});
  EXPECT_EQ(c.kept_dims, 2);
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_NEAR(c.keys[i], keys[i], 1e-5f);
}

// FP8 E4M3 keeps 3 mantissa bits: round-to-nearest errs by at most half a step, 2^-4 relative,
// for every element whose scaled value lies in the normal range (|x| / scale ≥ 2^-6).
TEST(FunctionalQuant, Fp8E4M3RelativeErrorIsAtMostTwoToMinusFourInRange) {
  const int rows = 64, dim = 128;
  const std::vector<float> x = gaussian(size_t(rows * dim), 21, 3.0);
  const std::vector<float> y = store_and_load(x.data(), rows, dim, Format::fp8_e4m3);
  int checked = 0;
  for (int r = 0; r < rows; ++r) {
    float amax = 0;
    for (int j = 0; j < dim; ++j) amax = std::max(amax, std::fabs(x[size_t(r * dim + j)]));
    const float scale = amax / 448.0f;
    for (int j = 0; j < dim; ++j) {
      const size_t i = size_t(r * dim + j);
      if (std::fabs(x[i]) / scale < 0x1.0p-6f) continue;
      EXPECT_LE(std::fabs(y[i] - x[i]), 0x1.0p-4f * std::fabs(x[i]) * (1 + 1e-6f)) << x[i];
      ++checked;
    }
  }
  EXPECT_GT(checked, rows * dim * 9 / 10);
}

// BF16 keeps 8 significant bits (relative error ≤ 2^-8), FP16 11 (≤ 2^-11) in their normal ranges.
TEST(FunctionalQuant, Bf16AndFp16RelativeErrorBounds) {
  const std::vector<float> x = gaussian(4096, 22, 10.0);
  const std::vector<float> b = store_and_load(x.data(), 32, 128, Format::bf16);
  const std::vector<float> h = store_and_load(x.data(), 32, 128, Format::fp16);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::fabs(x[i]) < 1e-3f) continue;
    EXPECT_LE(std::fabs(b[i] - x[i]), 0x1.0p-8f * std::fabs(x[i]));
    EXPECT_LE(std::fabs(h[i] - x[i]), 0x1.0p-11f * std::fabs(x[i]));
  }
}

// E2M1 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6: midpoints go to the value with an even mantissa bit,
// and anything past 6 saturates.
TEST(FunctionalQuant, E2M1RoundsToNearestEvenAndSaturates) {
  const std::vector<std::pair<float, float>> cases = {
      {0.25f, 0.0f}, {0.3f, 0.5f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f}, {2.5f, 2.0f},
      {3.5f, 4.0f},  {5.0f, 4.0f}, {5.5f, 6.0f},  {7.0f, 6.0f},  {-5.0f, -4.0f}, {1e30f, 6.0f}};
  for (const auto& [in, out] : cases) EXPECT_EQ(round_e2m1(in), out) << in;
}

// With one scale per token, the largest element maps to ±6 and survives exactly.
TEST(FunctionalQuant, Fp4KeepsEachTokensLargestElement) {
  const std::vector<float> x = {0.1f, -3.0f, 0.7f, 1.2f};
  const std::vector<float> y = store_and_load(x.data(), 1, 4, Format::fp4_e2m1);
  EXPECT_FLOAT_EQ(y[1], -3.0f);
  EXPECT_EQ(parse_format("fp4_e2m1"), Format::fp4_e2m1);
  EXPECT_THROW(parse_format("fp6"), std::invalid_argument);
}

// A version-1 .npy file with a float16 payload, written byte by byte as NumPy lays it out.
TEST(FunctionalNpy, ReadsAHandWrittenFloat16File) {
  const std::string path = ::testing::TempDir() + "/indexsim_functional_test.npy";
  std::string header = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  {
    std::ofstream f(path, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const uint16_t len = uint16_t(header.size());
    f.put(char(len & 0xFF)).put(char(len >> 8));
    f << header;
    // 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800, 0, 65504 = 0x7BFF, 2^-24 = 0x0001
    for (uint16_t h : {0x3C00, 0xC000, 0x3800, 0x0000, 0x7BFF, 0x0001}) f.put(char(h & 0xFF)).put(char(h >> 8));
  }
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.f32, (std::vector<float>{1.0f, -2.0f, 0.5f, 0.0f, 65504.0f, 0x1.0p-24f}));
  std::remove(path.c_str());
  EXPECT_THROW(read_npy(path), std::runtime_error);
}

// Same vectors, same seed: bit-identical results, random gates included.
TEST(FunctionalStudy, SameInputsAndSeedGiveBitIdenticalResults) {
  const VectorSet v = random_vectors(2, 256, 4, 16, 4, 5);
  const std::vector<Case> cases = {Case::pooled({4, PoolAxis::tokens, Gate::softmax, GateInit::random, 7, 16}),
                                   Case::pruned({PruneBasis::pca, 0.9, 0}), Case::quantized(Format::fp4_e2m1)};
  EvalOptions opt;
  opt.ks = {8, 64};
  const auto a = run_study(v, cases, opt), b = run_study(v, cases, opt);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key_cos, b[i].key_cos);
    EXPECT_EQ(a[i].score_cos, b[i].score_cos);
    EXPECT_EQ(a[i].recall, b[i].recall);
  }
}

// Pooled and pruned values are stored at the configured precision: fp16 rounds them (error ≤ 2^-11
// relative per stored value) and costs 2 bytes a value, fp32 keeps them and costs 4.
TEST(FunctionalPrecision, Fp16StorageRoundsPooledValuesAndHalvesTheirBytes) {
  const std::vector<float> keys = gaussian(8 * 4, 12);
  const PoolSpec p32{2, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0, Format::fp32};
  PoolSpec p16 = p32;
  p16.precision = Format::fp16;
  const Stored a = pool_keys(keys.data(), 8, 4, 1, p32, 0), b = pool_keys(keys.data(), 8, 4, 1, p16, 0);
  EXPECT_EQ(a.bytes_per_value, 4);
  EXPECT_EQ(b.bytes_per_value, 2);
  bool rounded = false;
  for (size_t i = 0; i < a.keys.size(); ++i) {
    EXPECT_LE(std::fabs(b.keys[i] - a.keys[i]), 0x1.0p-11f * std::fabs(a.keys[i]));
    rounded |= b.keys[i] != a.keys[i];
  }
  EXPECT_TRUE(rounded);
  PoolSpec bad = p32;
  bad.precision = Format::fp8_e4m3;
  EXPECT_THROW(pool_keys(keys.data(), 8, 4, 1, bad, 0), std::invalid_argument);
}

// The headline figures are the plain means of the per-layer figures.
TEST(FunctionalStudy, HeadlineFiguresAreMeansOverLayers) {
  const VectorSet v = random_vectors(3, 128, 4, 16, 4, 8);
  EvalOptions opt;
  opt.ks = {8};
  const CaseResult r = run_study(v, {Case::pooled({2, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0})}, opt)[0];
  ASSERT_EQ(r.layers.size(), 3u);
  double kc = 0, rec = 0;
  for (const Figures& f : r.layers) {
    kc += f.key_cos / 3;
    rec += f.recall[0] / 3;
  }
  EXPECT_NEAR(r.key_cos, kc, 1e-12);
  EXPECT_NEAR(r.recall[0], rec, 1e-12);
  EXPECT_DOUBLE_EQ(r.bytes_per_token, 64 * 16 * 2 / 128.0);  // 64 pooled fp16 keys of 16 dims over 128 tokens
}

// SimHash with the asymmetric estimator: q · k^ = |k| sqrt(pi/2) / b · Σ_i (r_i · q) sign(r_i · k),
// r_i the rows of gaussian(b · dim, seed); checked term by term on one key (b = 8, dim = 4), with
// a norm exactly representable in FP16 (|k| = 3). A token costs b / 8 + 2 bytes.
TEST(FunctionalHash, ScoreIsTheAsymmetricSimHashEstimate) {
  const std::vector<float> k = {1.0f, 2.0f, -2.0f, 0.0f}, q = {0.5f, -1.0f, 0.25f, 2.0f};
  const HashSpec h{8, 7};
  const Stored s = hash_keys(k.data(), 1, 4, h);
  const std::vector<float> r = gaussian(8 * 4, 7);
  double want = 0;
  for (int i = 0; i < 8; ++i) {
    double rk = 0, rq = 0;
    for (int j = 0; j < 4; ++j) rk += double(r[size_t(i * 4 + j)]) * k[size_t(j)], rq += double(r[size_t(i * 4 + j)]) * q[size_t(j)];
    want += rq * (rk >= 0 ? 1.0 : -1.0);
  }
  want *= 3.0 * std::sqrt(M_PI / 2.0) / 8.0;
  double got = 0;
  for (int j = 0; j < 4; ++j) got += double(q[size_t(j)]) * s.keys[size_t(j)];
  EXPECT_NEAR(got, want, 1e-5 * std::abs(want) + 1e-6);
  EXPECT_DOUBLE_EQ(s.stored_values * s.bytes_per_value, 8 / 8.0 + 2.0);
  EXPECT_THROW(hash_keys(k.data(), 1, 4, HashSpec{12, 1}), std::invalid_argument);
  EXPECT_THROW(Case::chained({Case::hashed(h), Case::quantized(Format::fp8_e4m3)}), std::invalid_argument);
}

// The estimate is unbiased, so its error shrinks as 1/sqrt(b): over random keys and one query,
// the scores' cosine to the exact q · k rises with the bits and passes 0.99 at 4096.
TEST(FunctionalHash, MoreBitsTrackTheExactScoresMoreClosely) {
  const int n = 64, dim = 32;
  const std::vector<float> keys = gaussian(size_t(n) * dim, 3), q = gaussian(dim, 4);
  auto score_cos = [&](int bits) {
    const Stored s = hash_keys(keys.data(), n, dim, HashSpec{bits, 5});
    const auto exact = scores(q.data(), dim, 1, ScoreMode::dot, keys.data(), n);
    const auto est = scores(q.data(), dim, 1, ScoreMode::dot, s.keys.data(), n);
    return cosine(exact.data(), est.data(), n);
  };
  const double c64 = score_cos(64), c512 = score_cos(512), c4096 = score_cos(4096);
  EXPECT_LT(c64, c512);
  EXPECT_LT(c512, c4096);
  EXPECT_GT(c4096, 0.99);
}
