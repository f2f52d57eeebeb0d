// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/fixture.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/core/version.hpp"
#include "sim/functional/npy.hpp"
#include "sim/functional/rng.hpp"

namespace indexsim::sim::functional {

VectorSet load_fixture(const std::string& dir) {
  std::ifstream mf(dir + "/meta.json");
  if (!mf) throw std::runtime_error(dir + "/meta.json: cannot open (is --fixture a vector fixture folder?)");
  const auto meta = nlohmann::json::parse(mf);
  const NpyArray k = read_npy(dir + "/keys.npy");
  const NpyArray q = read_npy(dir + "/queries.npy");
  const NpyArray pos = read_npy(dir + "/query_pos.npy");
  if (k.shape.size() != 3 || q.shape.size() != 3 || k.shape[0] != q.shape[0] || k.shape[2] != q.shape[2])
    throw std::runtime_error(dir + ": keys.npy must be layers × tokens × dim and queries.npy layers × queries × dim");
  if (pos.shape.size() != 1 || pos.shape[0] != q.shape[1] || pos.i32.empty())
    throw std::runtime_error(dir + "/query_pos.npy: must hold one int32 position per query");
  VectorSet v;
  v.layers = int(k.shape[0]);
  v.tokens = k.shape[1];
  v.queries = int(q.shape[1]);
  v.dim = int(k.shape[2]);
  v.heads = int(meta.at("heads_kept").size());
  if (v.heads <= 0 || v.dim % v.heads != 0 || meta.at("head_dim").get<int>() * v.heads != v.dim)
    throw std::runtime_error(dir + "/meta.json: heads_kept × head_dim must equal the key width " +
                             std::to_string(v.dim));
  v.keys = k.f32;
  v.query = q.f32;
  v.query_pos = pos.i32;
  v.causal = meta.value("causal", false);
  if (v.causal)
    for (int32_t p : v.query_pos)
      if (p < 0 || p >= v.tokens)
        throw std::runtime_error(dir + "/query_pos.npy: position " + std::to_string(p) + " outside the " +
                                 std::to_string(v.tokens) + " tokens of a causal fixture");
  return v;
}

std::string default_fixture_dir() { return sim::source_dir() + "/tests/data/vectors"; }

VectorSet with_queries(const VectorSet& v, int n) {
  if (n < 1 || n > v.queries)
    throw std::invalid_argument("queries = " + std::to_string(n) + ": must be in [1, " + std::to_string(v.queries) + "]");
  VectorSet out = v;
  out.queries = n;
  out.query.clear();
  out.query_pos.clear();
  for (int l = 0; l < v.layers; ++l)
    for (int i = 0; i < n; ++i) {
      const int src = int(int64_t(i) * v.queries / n);
      out.query.insert(out.query.end(), v.query_of(l, src), v.query_of(l, src) + v.dim);
      if (l == 0) out.query_pos.push_back(v.query_pos[size_t(src)]);
    }
  return out;
}

VectorSet random_vectors(int layers, int64_t tokens, int queries, int dim, int heads, uint64_t seed) {
  VectorSet v;
  v.layers = layers;
  v.tokens = tokens;
  v.queries = queries;
  v.dim = dim;
  v.heads = heads;
  v.keys = gaussian(size_t(layers) * size_t(tokens) * size_t(dim), seed);
  v.query = gaussian(size_t(layers) * size_t(queries) * size_t(dim), seed + 1);
  for (int i = 0; i < queries; ++i) v.query_pos.push_back(int32_t(int64_t(i) * tokens / std::max(queries, 1)));
  return v;
}

}  // namespace indexsim::sim::functional
