// SPDX-License-Identifier: Apache-2.0
#include "sim/functional/pool.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/functional/rng.hpp"

namespace indexsim::sim::functional {

namespace cpu = kernels::cpu;

Stored Stored::per_token(std::vector<float> keys, int64_t tokens, int dim) {
  Stored s;
  s.dim = dim;
  s.keys = std::move(keys);
  s.begin.resize(size_t(tokens) + 1);
  for (int64_t t = 0; t <= tokens; ++t) s.begin[size_t(t)] = t;
  s.always.assign(size_t(tokens), 0);
  s.stored_values = double(tokens) * dim;
  return s;
}

namespace {

cpu::PoolParams gate_params(const PoolSpec& spec, int width, uint64_t stream) {
  cpu::PoolParams p;
  p.ratio = spec.ratio;
  p.gate = spec.gate;
  const size_t n = size_t(spec.gate == cpu::Gate::sigmoid ? 2 * width : width);
  if (spec.init == GateInit::uniform)
    p.gate_w.assign(n, 0.0f);
  else
    p.gate_w = gaussian(n, spec.seed * 1000003u + stream, 1.0 / std::sqrt(double(width)));
  return p;
}

}  // namespace

Stored pool_keys(const float* keys, int64_t tokens, int dim, int heads, const PoolSpec& spec, uint64_t stream) {
  if (spec.ratio < 1) throw std::invalid_argument("pool ratio must be >= 1, got " + std::to_string(spec.ratio));
  if (heads < 1 || dim % heads != 0) throw std::invalid_argument("pool: dim must be a multiple of heads");
  if (spec.recent_full < 0) throw std::invalid_argument("pool: recent_full must be >= 0");
  const double value_bytes = plain_value_bytes(spec.precision, "pool");
  const int64_t history = std::max<int64_t>(0, tokens - spec.recent_full);
  const float* recent = keys + history * dim;
  const int64_t n_recent = tokens - history;

  if (spec.axis == PoolAxis::vectors) {
    const int hd = dim / heads;
    const cpu::PoolParams p = gate_params(spec, hd, stream);
    std::vector<float> rec(keys, keys + tokens * dim);
    const int groups = (heads + spec.ratio - 1) / spec.ratio;
    for (int64_t t = 0; t < history; ++t) {
      const std::vector<float> raw = cpu::gated_pool(keys + t * dim, heads, hd, p);
      const std::vector<float> pooled = store_and_load(raw.data(), groups, hd, spec.precision);
      for (int h = 0; h < heads; ++h)
        std::copy_n(pooled.begin() + (h / spec.ratio) * hd, hd, rec.begin() + t * dim + h * hd);
    }
    Stored s = Stored::per_token(std::move(rec), tokens, dim);
    s.stored_values = double(history) * groups * hd + double(n_recent) * dim;
    s.bytes_per_value = value_bytes;
    return s;
  }

  const cpu::PoolParams p = gate_params(spec, dim, stream);
  const int64_t groups = (history + spec.ratio - 1) / spec.ratio;
  const std::vector<float> raw = cpu::gated_pool(keys, history, dim, p);
  const std::vector<float> pooled = store_and_load(raw.data(), groups, dim, spec.precision);
  Stored s;
  s.dim = dim;
  s.keys = pooled;
  s.keys.insert(s.keys.end(), recent, recent + n_recent * dim);
  for (int64_t g = 0; g < groups; ++g) {
    s.begin.push_back(g * spec.ratio);
    s.always.push_back(0);
  }
  if (history % spec.ratio != 0) s.always.back() = 1;
  for (int64_t t = history; t < tokens; ++t) {
    s.begin.push_back(t);
    s.always.push_back(0);
  }
  s.begin.push_back(tokens);
  s.stored_values = double(groups + n_recent) * dim;
  s.bytes_per_value = value_bytes;
  return s;
}

std::string describe(const PoolSpec& spec) {
  std::string out = std::to_string(spec.ratio) + ":1 " + (spec.axis == PoolAxis::tokens ? "tokens" : "vectors") +
                    " " + (spec.gate == cpu::Gate::sigmoid ? "sigmoid" : "softmax") + "/" +
                    (spec.init == GateInit::uniform ? "uniform" : "random");
  if (spec.recent_full > 0) out += " recent_full=" + std::to_string(spec.recent_full);
  if (spec.precision != Format::fp16) out += std::string(" ") + name(spec.precision);
  return out;
}

}  // namespace indexsim::sim::functional
