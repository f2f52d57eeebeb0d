// SPDX-License-Identifier: Apache-2.0
// The functional models on the real-vector fixture (tests/data/vectors): directions that must hold
// on real keys and queries, never numbers copied from a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/functional/accuracy.hpp"

using namespace indexsim::sim::functional;
using indexsim::kernels::cpu::Gate;

namespace {

// 16 of the 64 queries per layer keep each study to a second or so.
const VectorSet& fixture() {
  static const VectorSet v = with_queries(load_fixture(std::string(INDEXSIM_TEST_DATA) + "/vectors"), 16);
  return v;
}

std::vector<CaseResult> study(const std::vector<Case>& cases, std::vector<int> ks = {64, 256, 2048}) {
  EvalOptions opt;
  opt.ks = std::move(ks);
  return run_study(fixture(), cases, opt);
}

Case pool(int ratio, PoolAxis axis, int64_t recent = 0) {
  return Case::pooled({ratio, axis, Gate::sigmoid, GateInit::uniform, 1, recent});
}

}  // namespace

// The fixture is what its NOTE says: 6 layers × 4096 tokens of 4 heads × 32, 64 queries per layer.
TEST(FunctionalFixture, HoldsSixLayersOf4096TokensOfFourHeadsOf32) {
  const VectorSet v = load_fixture(std::string(INDEXSIM_TEST_DATA) + "/vectors");
  EXPECT_EQ(v.layers, 6);
  EXPECT_EQ(v.tokens, 4096);
  EXPECT_EQ(v.dim, 128);
  EXPECT_EQ(v.heads, 4);
  EXPECT_EQ(v.queries, 64);
  for (int32_t p : v.query_pos) EXPECT_TRUE(p >= 0 && p < v.tokens);
  // Not constant, not zero: consecutive keys differ, and every layer has a spread.
  for (int l = 0; l < v.layers; ++l) EXPECT_LT(cosine(v.keys_of(l), v.keys_of(l) + v.dim, v.dim), 0.9999);
}

// Pooling more keys into one loses more: key cosine and recall fall as the ratio grows (tokens axis).
TEST(FunctionalFixture, RecallFallsAsTheTokenPoolingRatioGrows) {
  const auto r = study({pool(2, PoolAxis::tokens), pool(3, PoolAxis::tokens), pool(4, PoolAxis::tokens)});
  for (size_t i = 1; i < r.size(); ++i) {
    EXPECT_LT(r[i].key_cos, r[i - 1].key_cos);
    EXPECT_LT(r[i].score_cos, r[i - 1].score_cos);
    for (size_t j = 0; j < r[i].recall.size(); ++j) EXPECT_LT(r[i].recall[j], r[i - 1].recall[j]) << "k index " << j;
  }
  for (const CaseResult& x : r) EXPECT_LT(x.recall[0], 1.0);
}

// Along vectors, 4:1 averages all 4 heads of a token and loses more than 2:1.
TEST(FunctionalFixture, FourToOneVectorPoolingLosesMoreThanTwoToOne) {
  const auto r = study({pool(2, PoolAxis::vectors), pool(4, PoolAxis::vectors)});
  EXPECT_LT(r[1].key_cos, r[0].key_cos);
  for (size_t j = 0; j < r[0].recall.size(); ++j) EXPECT_LT(r[1].recall[j], r[0].recall[j]);
}

// Real neighbouring keys are alike; independent Gaussian ones are not (their 2:1 mean keeps cos ≈ 1/√2).
// So 2:1 token pooling must retain more on the fixture than on Gaussian vectors of the same shape.
TEST(FunctionalFixture, RealNeighbouringKeysPoolBetterThanRandomOnes) {
  const VectorSet& v = fixture();
  const VectorSet g = random_vectors(v.layers, v.tokens, v.queries, v.dim, v.heads, 1);
  EvalOptions opt;
  opt.ks = {256};
  const CaseResult real = run_study(v, {pool(2, PoolAxis::tokens)}, opt)[0];
  const CaseResult rnd = run_study(g, {pool(2, PoolAxis::tokens)}, opt)[0];
  EXPECT_NEAR(rnd.key_cos, M_SQRT1_2, 0.02);
  EXPECT_GT(real.key_cos, rnd.key_cos + 0.05);
  EXPECT_GT(real.recall[0], rnd.recall[0]);
}

// On the tokens axis a recent window at full resolution can only help: more of the cache is exact.
TEST(FunctionalFixture, RecentFullWindowImprovesTokenPooling) {
  const auto r = study({pool(4, PoolAxis::tokens), pool(4, PoolAxis::tokens, 1024)});
  EXPECT_GT(r[1].key_cos, r[0].key_cos);
  EXPECT_GT(r[1].recall[1], r[0].recall[1]);
  EXPECT_GT(r[1].bytes_per_token, r[0].bytes_per_token);  // 3072/4 + 1024 entries instead of 4096/4
}

// Keeping 99 % of the variance keeps more dimensions and retains more than 90 % (PCA basis).
TEST(FunctionalFixture, PruningAt99PercentRetainsMoreThanAt90) {
  const auto r = study({Case::pruned({PruneBasis::pca, 0.90, 0}), Case::pruned({PruneBasis::pca, 0.95, 0}),
                        Case::pruned({PruneBasis::pca, 0.99, 0})});
  for (size_t i = 1; i < r.size(); ++i) {
    EXPECT_GT(r[i].kept_dims, r[i - 1].kept_dims);
    EXPECT_GT(r[i].key_cos, r[i - 1].key_cos);
    for (size_t j = 0; j < r[i].recall.size(); ++j) EXPECT_GE(r[i].recall[j], r[i - 1].recall[j]);
  }
  EXPECT_LT(r[2].kept_dims, 128);  // real keys are not isotropic: 99 % fits in fewer than all dims
}

// The variance spectrum in a PCA basis does not change under a rotation: Hadamard first, then PCA,
// keeps the same number of dims with the same retention. Pruning stored coordinates is another
// matter: the PCA basis needs the fewest dims for a share, and at a fixed count it retains the most.
TEST(FunctionalFixture, HadamardLeavesPcaPruningUnchangedButNotCoordinatePruning) {
  const auto r = study({Case::pruned({PruneBasis::pca, 0.95, 0}), Case::pruned({PruneBasis::hadamard_pca, 0.95, 0}),
                        Case::pruned({PruneBasis::coords, 0.95, 0}),
                        Case::pruned({PruneBasis::hadamard_coords, 0.95, 0}),
                        Case::pruned({PruneBasis::pca, 0, 32}), Case::pruned({PruneBasis::coords, 0, 32}),
                        Case::pruned({PruneBasis::hadamard_coords, 0, 32})});
  EXPECT_EQ(r[0].kept_dims, r[1].kept_dims);
  EXPECT_NEAR(r[0].key_cos, r[1].key_cos, 1e-4);
  for (size_t j = 0; j < r[0].recall.size(); ++j) EXPECT_NEAR(r[0].recall[j], r[1].recall[j], 0.01);
  EXPECT_LT(r[0].kept_dims, r[2].kept_dims);
  EXPECT_LT(r[0].kept_dims, r[3].kept_dims);
  EXPECT_GT(r[4].key_cos, r[5].key_cos);
  EXPECT_GT(r[4].key_cos, r[6].key_cos);
  EXPECT_GT(r[4].recall[0], r[5].recall[0]);
  EXPECT_GT(r[4].recall[0], r[6].recall[0]);
}

// Fewer bits, more loss: fp32 and fp16 are exact on fp16 keys; then bf16, fp8 and fp4 in turn lose more
// (recall may tie where a format loses too little to move a top-64 set).
TEST(FunctionalFixture, NarrowerStorageFormatsLoseMore) {
  const auto r = study({Case::quantized(Format::fp32), Case::quantized(Format::fp16), Case::quantized(Format::bf16),
                        Case::quantized(Format::fp8_e4m3), Case::quantized(Format::fp4_e2m1)});
  for (int i = 0; i < 2; ++i)
    for (double x : r[size_t(i)].recall) EXPECT_NEAR(x, 1.0, 1e-12);
  for (size_t i = 2; i < r.size(); ++i) {
    EXPECT_LT(r[i].key_cos, r[i - 1].key_cos);
    EXPECT_LE(r[i].recall[0], r[i - 1].recall[0]);
    EXPECT_LT(r[i].bytes_per_token, r[i - 1].bytes_per_token + 1e-9);
  }
}

// The CLI prints the study as JSON with one recall per requested k, overall and per layer.
TEST(FunctionalFixture, AccuracyCommandPrintsJsonRows) {
  const std::string cmd = std::string(INDEXSIM_BINARY) + " accuracy --json --queries 2 --k 64 --k 128 --fixture " +
                          INDEXSIM_TEST_DATA + "/vectors 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  EXPECT_NE(out.find("\"recall@128\""), std::string::npos);
  EXPECT_NE(out.find("\"technique\": \"prune\""), std::string::npos);
  EXPECT_NE(out.find("hadamard+coords"), std::string::npos);
  EXPECT_NE(out.find("\"per_layer\""), std::string::npos);
}

namespace {
// Eight 1-d keys k_t = t + 1 of one head; one query q = 1 at position 3: its exact top-2 is {2, 3}
// if it sees its prefix (causal), {6, 7} if it sees every token.
VectorSet line_of_keys(bool causal) {
  VectorSet v;
  v.layers = 2;
  v.tokens = 8;
  v.queries = 1;
  v.dim = 1;
  v.heads = 1;
  v.causal = causal;
  for (int l = 0; l < 2; ++l)
    for (int t = 0; t < 8; ++t) v.keys.push_back(l == 0 ? float(t + 1) : float(8 - t));  // layer 1 reversed
  v.query = {1.0f, 1.0f};
  v.query_pos = {3};
  return v;
}
}  // namespace

TEST(FunctionalFixture, ACausalQueryScoresOnlyItsPrefix) {
  // Recall of storage at fp32 is 1 both ways, but the floor and IndexShare's reuse tell the cases
  // apart: random k = 2 of the 4 visible tokens holds 2/4 of the top-2 (2/8 without the mask).
  // Layer 1's keys fall with t: over the prefix its top-2 is {0, 1}, disjoint from layer 0's {2, 3}.
  EvalOptions opt;
  opt.ks = {2};
  for (bool causal : {true, false}) {
    const VectorSet v = line_of_keys(causal);
    EXPECT_DOUBLE_EQ(run_study(v, {Case::quantized(Format::fp32)}, opt)[0].recall[0], 1.0);
    EXPECT_DOUBLE_EQ(random_recall(v, 2), causal ? 0.5 : 0.25);
    EXPECT_DOUBLE_EQ(share_recall(v, 2, 1), 0.0);  // {2,3} vs {0,1} causal; {6,7} vs {0,1} otherwise
  }
  // A 2:1 token pool whose entry straddles the query (tokens 2-3 pooled, 4-5 in the future) may not
  // lend it a future token: every selected token lies at or before position 3.
  VectorSet v = line_of_keys(true);
  const auto r = run_study(v, {Case::pooled({2, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0})}, opt);
  EXPECT_DOUBLE_EQ(r[0].recall[0], 1.0);  // the pool {2, 3} is the best entry the query can see
  EXPECT_DOUBLE_EQ(share_recall(v, 2, 5), -1.0);  // no layer that far back
}

TEST(FunctionalFixture, CausalFixtureOfARealLanguageModel) {
  // tests/data/causal (scripts/make_causal_fixture.py): SmolLM2-135M's post-RoPE keys of four adjacent
  // layers over 8192 tokens; queries score their prefix. At DSA's budget ratio (k = 128 of 8192,
  // 2048 of 131072) recall sits far above the random floor (k / n) and falls with narrower storage.
  VectorSet v = with_queries(load_fixture(std::string(INDEXSIM_TEST_DATA) + "/causal"), 16);
  EXPECT_TRUE(v.causal);
  EXPECT_EQ(v.layers, 4);
  EXPECT_EQ(v.tokens, 8192);
  EXPECT_EQ(v.dim, 128);
  EvalOptions opt;
  opt.ks = {128};
  const auto r = run_study(v, {Case::quantized(Format::fp8_e4m3), Case::quantized(Format::fp4_e2m1)}, opt);
  EXPECT_GT(r[0].recall[0], r[1].recall[0]);
  EXPECT_GT(r[1].recall[0], 10 * random_recall(v, 128));
  EXPECT_LT(random_recall(v, 128), 128.0 / 4096);  // every query sees more than 4096 tokens
  const double share = share_recall(v, 128, 1);
  EXPECT_GT(share, 10 * random_recall(v, 128));
  EXPECT_LT(share, 1.0);
}

TEST(FunctionalFixture, TechniquesChainInTheOrderTheCacheStoresThem) {
  // A chain applies pooling first (it makes the entries), then pruning of the entries' keys, then
  // the storage format; a link that changes nothing (fp32 storage) leaves the others' figures, and
  // each narrowing link costs recall at a budget of 64 of 4096 tokens.
  const VectorSet& v = fixture();
  EvalOptions opt;
  opt.ks = {64};
  const PoolSpec pool{4, PoolAxis::tokens, Gate::sigmoid, GateInit::uniform, 1, 0};
  const PruneSpec prune{PruneBasis::pca, 0.95, 0};
  const auto r = run_study(v, {Case::pooled(pool), Case::chained({Case::quantized(Format::fp32), Case::pooled(pool)}),
                               Case::chained({Case::pooled(pool), Case::pruned(prune)}),
                               Case::chained({Case::quantized(Format::fp4_e2m1), Case::pruned(prune), Case::pooled(pool)})},
                           opt);
  EXPECT_DOUBLE_EQ(r[1].recall[0], r[0].recall[0]);  // fp32 after pooling: the pooled keys as they were
  EXPECT_LT(r[2].recall[0], r[0].recall[0]);
  EXPECT_LT(r[3].recall[0], r[2].recall[0]);
  EXPECT_EQ(r[3].params.find("pool"), 0u);  // sorted: pool, prune, quantize whatever the order given
  // IndexShare over an exact store is plain IndexShare.
  EXPECT_DOUBLE_EQ(share_recall(v, Case::exact(), 64, 1), share_recall(v, 64, 1));
}
