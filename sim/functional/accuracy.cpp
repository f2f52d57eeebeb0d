// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/accuracy.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <map>
#include <stdexcept>

#include "kernels/cpu/reference.hpp"

namespace indexsim::sim::functional {

namespace cpu = kernels::cpu;

Case Case::exact() { return Case{}; }
Case Case::pooled(const PoolSpec& p) {
  Case c;
  c.kind = Kind::pool;
  c.pool = p;
  return c;
}
Case Case::pruned(const PruneSpec& p) {
  Case c;
  c.kind = Kind::prune;
  c.prune = p;
  return c;
}
Case Case::quantized(Format f) {
  Case c;
  c.kind = Kind::quantize;
  c.format = f;
  return c;
}
Case Case::hashed(const HashSpec& h) {
  Case c;
  c.kind = Kind::hash;
  c.hash = h;
  return c;
}
Case Case::chained(std::vector<Case> parts) {
  for (const Case& p : parts)
    if (p.kind == Kind::chain) throw std::invalid_argument("Case::chained: a chain inside a chain");
    else if (p.kind == Kind::hash) throw std::invalid_argument("Case::chained: hashed keys are not chained (the signs replace the stored keys)");
  std::stable_sort(parts.begin(), parts.end(), [](const Case& a, const Case& b) { return int(a.kind) < int(b.kind); });
  Case c;
  c.kind = Kind::chain;
  c.parts = std::move(parts);
  return c;
}

std::string Case::technique() const {
  switch (kind) {
    case Kind::exact: return "exact";
    case Kind::pool: return "pool";
    case Kind::prune: return "prune";
    case Kind::quantize: return "quantize";
    case Kind::chain: return "chain";
    case Kind::hash: return "hash";
  }
  return "?";
}

std::string Case::params() const {
  switch (kind) {
    case Kind::exact: return "keys as given";
    case Kind::pool: return describe(pool);
    case Kind::prune: return describe(prune);
    case Kind::quantize: return name(format);
    case Kind::hash: return describe(hash);
    case Kind::chain: {
      std::string s;
      for (const Case& p : parts) s += (s.empty() ? "" : " + ") + p.technique() + " " + p.params();
      return s;
    }
  }
  return "";
}

Stored apply(const Case& c, const VectorSet& v, int layer) {
  const float* k = v.keys_of(layer);
  switch (c.kind) {
    case Case::Kind::exact: return Stored::per_token(std::vector<float>(k, k + v.tokens * v.dim), v.tokens, v.dim);
    case Case::Kind::pool: return pool_keys(k, v.tokens, v.dim, v.heads, c.pool, uint64_t(layer));
    case Case::Kind::prune: return prune_keys(k, v.tokens, v.dim, c.prune);
    case Case::Kind::quantize: return quantize_keys(k, v.tokens, v.dim, c.format);
    case Case::Kind::hash: return hash_keys(k, v.tokens, v.dim, c.hash);
    case Case::Kind::chain: {
      Stored s = Stored::per_token(std::vector<float>(k, k + v.tokens * v.dim), v.tokens, v.dim);
      for (const Case& p : c.parts) {
        if (p.kind == Case::Kind::pool) {
          if (s.entries() != v.tokens) throw std::invalid_argument("apply: pooling must come first in a chain");
          s = pool_keys(k, v.tokens, v.dim, v.heads, p.pool, uint64_t(layer));
        } else if (p.kind == Case::Kind::prune || p.kind == Case::Kind::quantize) {
          // The entries' keys, pruned or stored narrower; the entries (their tokens) stay.
          const Stored t = p.kind == Case::Kind::prune ? prune_keys(s.keys.data(), s.entries(), v.dim, p.prune)
                                                       : quantize_keys(s.keys.data(), s.entries(), v.dim, p.format);
          s.keys = t.keys;
          if (t.kept_dims) s.kept_dims = t.kept_dims;
          s.stored_values = t.stored_values;
          s.bytes_per_value = t.bytes_per_value;
          s.extra_bytes += t.extra_bytes;
        }
      }
      return s;
    }
  }
  throw std::logic_error("apply: unknown case");
}

std::vector<float> scores(const float* q, int dim, int heads, ScoreMode mode, const float* keys, int64_t n) {
  if (mode == ScoreMode::dot) {
    std::vector<float> rows(q, q + dim);
    for (int j = 0; j < dim; ++j) rows.push_back(-q[j]);
    const float w[2] = {1.0f, -1.0f};
    return cpu::indexer_scores(rows.data(), w, 2, dim, keys, n);
  }
  const int hd = dim / heads;
  std::vector<float> rows(size_t(heads) * size_t(dim), 0.0f), w(size_t(heads), 1.0f);
  for (int h = 0; h < heads; ++h) std::copy_n(q + h * hd, hd, rows.begin() + size_t(h) * dim + size_t(h) * hd);
  return cpu::indexer_scores(rows.data(), w.data(), heads, dim, keys, n);
}

namespace {

// The selection rule of select_tokens, given the entries already ranked by score.
std::vector<int32_t> select_ranked(const Stored& s, const std::vector<int32_t>& ranked, int k) {
  std::vector<int32_t> out;
  int64_t left = k;
  auto take = [&](int64_t e) {
    for (int64_t t = s.begin[size_t(e)]; t < s.begin[size_t(e) + 1]; ++t) out.push_back(int32_t(t));
    left -= s.begin[size_t(e) + 1] - s.begin[size_t(e)];
  };
  for (int64_t e = 0; e < s.entries(); ++e)
    if (s.always[size_t(e)]) take(e);
  for (int32_t e : ranked) {
    if (left <= 0) break;
    if (s.always[size_t(e)]) continue;
    if (s.begin[size_t(e) + 1] - s.begin[size_t(e)] <= left) take(e);
  }
  return out;
}

}  // namespace

std::vector<int32_t> select_tokens(const Stored& s, const std::vector<float>& entry_scores, int k) {
  if (int64_t(entry_scores.size()) != s.entries()) throw std::invalid_argument("select_tokens: one score per entry");
  return select_ranked(s, cpu::topk(entry_scores, int(s.entries())), k);
}

double cosine(const float* a, const float* b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  if (aa == 0 || bb == 0) return aa == bb ? 1.0 : 0.0;
  return ab / std::sqrt(aa * bb);
}

double recall(const std::vector<int32_t>& selected, const std::vector<int32_t>& exact) {
  if (exact.empty()) return 1.0;
  std::vector<int32_t> a(selected), b(exact);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<int32_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return double(both.size()) / double(exact.size());
}

std::vector<Case> default_cases(const VectorSet& v) {
  using cpu::Gate;
  std::vector<Case> c{Case::exact()};
  for (PoolAxis axis : {PoolAxis::tokens, PoolAxis::vectors}) {
    for (int r : {2, 3, 4}) c.push_back(Case::pooled({r, axis, Gate::sigmoid, GateInit::uniform, 1, 0}));
    c.push_back(Case::pooled({4, axis, Gate::sigmoid, GateInit::random, 1, 0}));
    c.push_back(Case::pooled({4, axis, Gate::softmax, GateInit::random, 1, 0}));
    // The seeds' L1: the most recent quarter of the context (1K of the fixture's 4K) kept whole.
    c.push_back(Case::pooled({4, axis, Gate::sigmoid, GateInit::uniform, 1, v.tokens / 4}));
  }
  for (PruneBasis b : {PruneBasis::pca, PruneBasis::hadamard_pca, PruneBasis::coords, PruneBasis::hadamard_coords}) {
    for (double share : {0.90, 0.95, 0.99}) c.push_back(Case::pruned({b, share, 0}));
    c.push_back(Case::pruned({b, 0, v.dim / 2}));
  }
  for (Format f : {Format::fp32, Format::fp16, Format::bf16, Format::fp8_e4m3, Format::fp4_e2m1})
    c.push_back(Case::quantized(f));
  // The seeds' 1/3 storage ratio (seeds/004): of DSA's 132-byte entry (128 FP8 values and a scale),
  // 44 B = 336 bits and a 2-byte norm; of the fixture's FP16 keys (2 B a value), 1/3 of that.
  c.push_back(Case::hashed({336, 1}));
  const int sign_bytes = int(std::lround(v.dim * 2.0 / 3.0 - 2.0));
  if (sign_bytes * 8 > 336) c.push_back(Case::hashed({sign_bytes * 8, 1}));
  return c;
}

namespace {
// Tokens query q may score: all of them, or its prefix in a causal fixture.
int64_t visible(const VectorSet& v, int q) {
  return v.causal ? std::min<int64_t>(v.tokens, int64_t(v.query_pos[size_t(q)]) + 1) : v.tokens;
}
}  // namespace

namespace {
// A causal query that sees `seen` tokens: entries that begin after it are not there yet, so they
// rank last; a straddling entry competes, and its tokens after the query are dropped from the
// selection (they count as misses: the pool the query reads holds tokens it cannot attend).
std::vector<int32_t> rank_visible(const Stored& s, std::vector<float> entry_scores, int64_t seen) {
  for (int64_t e = 0; e < s.entries(); ++e)
    if (s.begin[size_t(e)] >= seen) entry_scores[size_t(e)] = -std::numeric_limits<float>::infinity();
  return cpu::topk(entry_scores, int(s.entries()));
}
std::vector<int32_t> select_visible(const Stored& s, const std::vector<int32_t>& ranked, int64_t seen, int k) {
  std::vector<int32_t> sel = select_ranked(s, ranked, int(std::min<int64_t>(k, seen)));
  sel.erase(std::remove_if(sel.begin(), sel.end(), [seen](int32_t t) { return t >= seen; }), sel.end());
  return sel;
}
}  // namespace

std::vector<double> share_recalls(const VectorSet& v, const Case& c, int k, int max_distance) {
  std::vector<double> sum(size_t(std::max(max_distance, 0)), 0.0);
  std::vector<int> n(sum.size(), 0);
  // Each layer's keys as `c` stores them, once; per query, each layer's exact top-k and its
  // selection (by its own query), once, then every pair of layers `distance` apart.
  std::vector<Stored> stored;
  for (int l = 0; l < v.layers; ++l) stored.push_back(apply(c, v, l));
  for (int q = 0; q < v.queries; ++q) {
    const int64_t seen = visible(v, q);
    if (seen <= k) continue;
    std::vector<std::vector<int32_t>> exact, selected;
    for (int l = 0; l < v.layers; ++l) {
      exact.push_back(cpu::topk(scores(v.query_of(l, q), v.dim, v.heads, ScoreMode::dot, v.keys_of(l), seen), k));
      const Stored& s = stored[size_t(l)];
      const auto es = scores(v.query_of(l, q), v.dim, v.heads, ScoreMode::dot, s.keys.data(), s.entries());
      selected.push_back(select_visible(s, rank_visible(s, es, seen), seen, k));
    }
    for (int d = 1; d <= max_distance && d < v.layers; ++d)
      for (int l = d; l < v.layers; ++l) {
        sum[size_t(d - 1)] += recall(selected[size_t(l - d)], exact[size_t(l)]);
        ++n[size_t(d - 1)];
      }
  }
  std::vector<double> out(sum.size(), -1.0);
  for (size_t d = 0; d < sum.size(); ++d)
    if (n[d]) out[d] = sum[d] / n[d];
  return out;
}

double share_recall(const VectorSet& v, const Case& c, int k, int distance) {
  if (distance < 1 || distance >= v.layers) return -1;
  return share_recalls(v, c, k, distance)[size_t(distance - 1)];
}

double share_recall(const VectorSet& v, int k, int distance) { return share_recall(v, Case::exact(), k, distance); }

double random_recall(const VectorSet& v, int k) {
  // k tokens drawn at random from the n a query sees hold k/n of its exact top-k on average.
  double r = 0;
  for (int q = 0; q < v.queries; ++q) r += std::min(1.0, double(k) / double(visible(v, q)));
  return r / std::max(1, v.queries);
}

std::vector<CaseResult> run_study(const VectorSet& v, const std::vector<Case>& cases, const EvalOptions& opt) {
  if (v.layers < 1 || v.tokens < 1 || v.queries < 1) throw std::invalid_argument("run_study: empty vector set");
  for (int k : opt.ks)
    if (k < 1 || k > v.tokens)
      throw std::invalid_argument("k = " + std::to_string(k) + " must be in [1, " + std::to_string(v.tokens) + "]");
  std::vector<CaseResult> out(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    out[i].technique = cases[i].technique();
    out[i].params = cases[i].params();
  }
  for (int l = 0; l < v.layers; ++l) {
    const float* keys = v.keys_of(l);
    std::vector<std::vector<float>> exact_scores(size_t(v.queries));
    std::vector<std::vector<std::vector<int32_t>>> exact_top(size_t(v.queries));
    for (int q = 0; q < v.queries; ++q) {
      exact_scores[size_t(q)] = scores(v.query_of(l, q), v.dim, v.heads, opt.score, keys, visible(v, q));
      for (int k : opt.ks)
        exact_top[size_t(q)].push_back(cpu::topk(exact_scores[size_t(q)], int(std::min<int64_t>(k, visible(v, q)))));
    }
    // One fit per basis and layer serves every share and count in that basis.
    std::map<PruneBasis, PruneFit> fits;
    for (size_t i = 0; i < cases.size(); ++i) {
      Stored s;
      if (cases[i].kind == Case::Kind::prune) {
        auto it = fits.find(cases[i].prune.basis);
        if (it == fits.end())
          it = fits.emplace(cases[i].prune.basis, fit_prune(keys, v.tokens, v.dim, cases[i].prune.basis)).first;
        s = prune_keys(it->second, cases[i].prune);
      } else {
        s = apply(cases[i], v, l);
      }
      Figures f;
      f.kept_dims = s.kept_dims;
      f.bytes_per_token = (s.stored_values * s.bytes_per_value + s.extra_bytes) / double(v.tokens);
      f.recall.assign(opt.ks.size(), 0.0);
      double kc = 0;
      for (int64_t e = 0; e < s.entries(); ++e)
        for (int64_t t = s.begin[size_t(e)]; t < s.begin[size_t(e) + 1]; ++t)
          kc += cosine(keys + t * v.dim, s.keys.data() + e * v.dim, v.dim);
      f.key_cos = kc / double(v.tokens);
      std::vector<float> token_scores(size_t(v.tokens));
      for (int q = 0; q < v.queries; ++q) {
        const std::vector<float> es = scores(v.query_of(l, q), v.dim, v.heads, opt.score, s.keys.data(), s.entries());
        for (int64_t e = 0; e < s.entries(); ++e)
          std::fill(token_scores.begin() + s.begin[size_t(e)], token_scores.begin() + s.begin[size_t(e) + 1],
                    es[size_t(e)]);
        const int64_t n = visible(v, q);
        f.score_cos += cosine(exact_scores[size_t(q)].data(), token_scores.data(), n);
        const std::vector<int32_t> ranked = rank_visible(s, es, n);
        for (size_t j = 0; j < opt.ks.size(); ++j)
          f.recall[j] += recall(select_visible(s, ranked, n, opt.ks[j]), exact_top[size_t(q)][j]);
      }
      f.score_cos /= v.queries;
      for (double& x : f.recall) x /= v.queries;
      out[i].layers.push_back(f);
    }
  }
  for (CaseResult& r : out) {
    r.recall.assign(opt.ks.size(), 0.0);
    for (const Figures& f : r.layers) {
      r.kept_dims += f.kept_dims / v.layers;
      r.bytes_per_token += f.bytes_per_token / v.layers;
      r.key_cos += f.key_cos / v.layers;
      r.score_cos += f.score_cos / v.layers;
      for (size_t j = 0; j < r.recall.size(); ++j) r.recall[j] += f.recall[j] / v.layers;
    }
  }
  return out;
}

}  // namespace indexsim::sim::functional
