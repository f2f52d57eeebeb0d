// SPDX-License-Identifier: Apache-2.0
// The accuracy study: each technique's stored keys against the exact indexer on the same vectors.
//
// The fixture's indexer score of key k for a 128-d query q is q·k: the sum of the 4 heads' attention
// logits (ScoreMode::dot). ScoreMode::relu_heads is the lightning indexer's form Σ_h ReLU(q_h·k_h),
// one head per 32-d block; on these keys many scores are exactly 0, so its large-k recall measures
// tie-breaking as much as the technique. Both run through kernels::cpu::indexer_scores; dot uses
// two heads q and -q with weights 1 and -1, since ReLU(x) - ReLU(-x) = x.
//
// Metrics, each a mean over layers (and tokens or queries):
//   key cosine    cos(k_t, k̂_t), k̂_t the key that stands for token t in the cache
//   score cosine  cos(s, ŝ) of the score vectors over all tokens, ŝ_t the score of t's entry
//   recall@k      |selected ∩ exact top-k| / k, selected = the technique's k-token selection
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/functional/fixture.hpp"
#include "sim/functional/hash.hpp"
#include "sim/functional/pool.hpp"
#include "sim/functional/prune.hpp"
#include "sim/functional/quantize.hpp"
#include "sim/functional/stored.hpp"

namespace indexsim::sim::functional {

enum class ScoreMode { dot, relu_heads };

struct Case {
  enum class Kind { exact, pool, prune, quantize, chain, hash } kind = Kind::exact;
  PoolSpec pool;
  PruneSpec prune;
  HashSpec hash;
  Format format = Format::fp32;
  std::vector<Case> parts;   // chain: the techniques applied one after another (see apply())

  static Case exact();
  static Case pooled(const PoolSpec& p);
  static Case pruned(const PruneSpec& p);
  static Case quantized(Format f);
  static Case hashed(const HashSpec& h);
  // Several techniques on one cache, in the order it stores them: pooling (which makes the entries),
  // then pruning the entries' keys, then the storage format of what is kept. The format is applied
  // to the reconstructed keys, not to pruned coefficients: an approximation of quantising those.
  static Case chained(std::vector<Case> parts);
  std::string technique() const;
  std::string params() const;
};

struct Figures {
  double kept_dims = 0;          // 0 = not pruned
  double bytes_per_token = 0;    // cache bytes per context token
  double key_cos = 0;
  double score_cos = 0;
  std::vector<double> recall;    // one per k of EvalOptions::ks
};

struct CaseResult : Figures {    // the figures are means over layers
  std::string technique;
  std::string params;
  std::vector<Figures> layers;   // each layer's own (means over its tokens or queries)
};

struct EvalOptions {
  std::vector<int> ks = {64, 256, 2048};
  ScoreMode score = ScoreMode::dot;
};

// The technique applied to one layer's keys (the random gate's stream is the layer).
Stored apply(const Case& c, const VectorSet& v, int layer);

// The k tokens a technique selects, given its entries' scores: the always-selected entries first,
// then entries by descending score (ties: lower index) as long as their tokens fit in k.
std::vector<int32_t> select_tokens(const Stored& s, const std::vector<float>& entry_scores, int k);

// The indexer's scores of one 128-d query over n keys.
std::vector<float> scores(const float* q, int dim, int heads, ScoreMode mode, const float* keys, int64_t n);

double cosine(const float* a, const float* b, int64_t n);
double recall(const std::vector<int32_t>& selected, const std::vector<int32_t>& exact);

// The default study: exact, pooling (both axes, 2:1 to 4:1, gates, a recent window), pruning
// (90/95/99 % variance and a fixed count, in each basis), quantisation (every format), hashed
// compression (1/3 of DSA's FP8 entry and 1/3 of the FP16 keys).
std::vector<Case> default_cases(const VectorSet& v);

std::vector<CaseResult> run_study(const VectorSet& v, const std::vector<Case>& cases, const EvalOptions& opt);

// IndexShare together with a storage technique `c` (exact: plain IndexShare): recall@k of the
// selection layer l - distance made from its keys as `c` leaves them, against layer l's exact top-k.
double share_recall(const VectorSet& v, const Case& c, int k, int distance);
// The same for every distance 1..max_distance at once (element d - 1; -1 where no pair is that far).
std::vector<double> share_recalls(const VectorSet& v, const Case& c, int k, int max_distance);

// IndexShare's cost: recall@k of the top-k a layer `distance` layers earlier selected, against this
// layer's own exact top-k, for the same query; mean over the fixture's layers from `distance` on and
// its queries (the fixture's layers stand for consecutive model layers). Queries that see no more
// than k tokens are left out (any selection is exact there); -1 when none is left.
double share_recall(const VectorSet& v, int k, int distance);

// Recall@k of k tokens drawn uniformly from those a query sees (k / n, n its visible tokens),
// averaged over the fixture's queries: the floor a technique's recall is set beside.
double random_recall(const VectorSet& v, int k);

}  // namespace indexsim::sim::functional
