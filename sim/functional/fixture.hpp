// SPDX-License-Identifier: Apache-2.0
// The real-vector fixture (tests/data/vectors, made by scripts/make_vectors_fixture.py): per layer,
// the indexer-like 128-d keys of every context token and the queries of a few tokens. A 128-d row
// is 4 heads × 32 dims of one attention layer, head-major.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace indexsim::sim::functional {

struct VectorSet {
  int layers = 0;
  int64_t tokens = 0;
  int queries = 0;
  int dim = 0;
  int heads = 0;          // vectors per token: the axis `vectors` pools these
  bool causal = false;    // a query at position p scores only tokens 0..p (a causal model's fixture)
  std::vector<float> keys;      // layers × tokens × dim
  std::vector<float> query;     // layers × queries × dim
  std::vector<int32_t> query_pos;

  int head_dim() const { return dim / heads; }
  const float* keys_of(int layer) const { return keys.data() + size_t(layer) * size_t(tokens) * size_t(dim); }
  const float* query_of(int layer, int q) const {
    return query.data() + (size_t(layer) * size_t(queries) + size_t(q)) * size_t(dim);
  }
};

// Reads keys.npy, queries.npy, query_pos.npy and meta.json's head count from `dir`.
VectorSet load_fixture(const std::string& dir);

// Where the committed fixture lives: tests/data/vectors under the source tree.
std::string default_fixture_dir();

// The same vectors with n of the queries, evenly spaced (a quicker study).
VectorSet with_queries(const VectorSet& v, int n);

// Deterministic Gaussian vectors of the same shape (an extra case next to the real ones, never a stand-in).
VectorSet random_vectors(int layers, int64_t tokens, int queries, int dim, int heads, uint64_t seed);

}  // namespace indexsim::sim::functional
