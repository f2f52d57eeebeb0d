// SPDX-License-Identifier: Apache-2.0
// Internals shared by the emulated-kernel generators (emulate.cpp, gemm_kernels.cpp,
// attention_kernels.cpp): the trace builder, portable seeded randomness, the top-k row picker.
// Not part of the generators' interface (emulate.hpp is).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "traces/generators/model_shape.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::trace::detail {

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Bytes of `elems` elements of `bits` each (FP4 packs two per byte).
inline uint64_t bytes_of(uint64_t elems, uint32_t bits) { return (elems * bits + 7) / 8; }

inline uint32_t checked_u32(uint64_t v, const char* what) {
  if (v > UINT32_MAX) throw std::invalid_argument(std::string(what) + " exceeds 2^32-1: " + std::to_string(v));
  return static_cast<uint32_t>(v);
}

// Portable randomness: std::uniform_*_distribution differ across standard libraries, so every draw
// is derived from raw mt19937_64 output here.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(g()) * n) >> 64); }
  double unit() { return static_cast<double>(g() >> 11) * (1.0 / 9007199254740992.0); }
};
inline uint64_t sub_seed(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  return splitmix64(splitmix64(splitmix64(seed ^ 0x1d8e4e27c47d124full) ^ a) ^ b) ^ c;
}

// Picks `k` of the tokens [0, n): the first `sink`, the last `recent`, and clusters of consecutive
// tokens (geometric lengths with mean `cluster_mean`) at uniform positions until k are picked.
// Returns them ascending. n <= k: all tokens.
class TopkPicker {
 public:
  std::vector<uint32_t> pick(uint64_t n, uint64_t k, const TopkSelection& sel, Rng& rng) {
    std::vector<uint32_t> out;
    if (n <= k) {
      out.resize(n);
      for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<uint32_t>(i);
      return out;
    }
    words_.assign(ceil_div(n, 64), 0);
    uint64_t picked = 0;
    auto mark = [&](uint64_t i) {
      uint64_t& w = words_[i >> 6];
      const uint64_t bit = 1ull << (i & 63);
      if (!(w & bit)) {
        w |= bit;
        ++picked;
      }
    };
    for (uint64_t i = 0; i < std::min<uint64_t>(sel.sink_tokens, n) && picked < k; ++i) mark(i);
    for (uint64_t i = n - std::min<uint64_t>(sel.recent_tokens, n); i < n && picked < k; ++i) mark(i);
    const double p_continue = (sel.cluster_mean_tokens - 1.0) / sel.cluster_mean_tokens;
    while (picked < k) {
      uint64_t i = rng.below(n);
      do {
        mark(i++);
      } while (picked < k && i < n && rng.unit() < p_continue);
    }
    out.reserve(k);
    for (uint64_t w = 0; w < words_.size(); ++w)
      for (uint64_t bits = words_[w]; bits; bits &= bits - 1)
        out.push_back(static_cast<uint32_t>(w * 64 + __builtin_ctzll(bits)));
    return out;
  }

 private:
  std::vector<uint64_t> words_;
};

// Builds a TraceData: tensors, kernels on streams with their same-stream order as dependencies,
// and access records.
class Builder {
 public:
  TraceData t;
  // Kernels that name no stream go on this one (a step split into micro-batches builds each on its own).
  static constexpr uint32_t kCurrentStream = UINT32_MAX;
  uint32_t current_stream = 0;

  uint32_t tensor(const std::string& name, TensorClass cls, int layer, uint64_t bytes) {
    TensorRecord r;
    r.id = static_cast<uint32_t>(t.tensors.size());
    r.name = name;
    r.cls = cls;
    r.layer = layer;
    r.bytes = bytes;
    t.tensors.push_back(r);
    return r.id;
  }

  uint32_t kernel(const std::string& name, KernelKind kind, int layer, std::array<uint64_t, 3> grid,
                  const KernelShape& ks, std::vector<uint32_t> extra_deps = {}, uint32_t stream = kCurrentStream) {
    if (stream == kCurrentStream) stream = current_stream;
    KernelRecord k;
    k.id = static_cast<uint32_t>(t.kernels.size());
    k.name = name;
    k.kind = kind;
    k.layer = layer;
    k.stream = stream;
    for (int i = 0; i < 3; ++i) k.grid[i] = checked_u32(std::max<uint64_t>(grid[i], 1), "grid dimension");
    k.block = {ks.threads, 1, 1};
    k.smem_bytes = ks.smem_bytes;
    k.regs_per_thread = ks.regs_per_thread;
    if (last_on_stream_.size() <= stream) last_on_stream_.resize(stream + 1, -1);
    if (last_on_stream_[stream] >= 0) k.deps.push_back(static_cast<uint32_t>(last_on_stream_[stream]));
    for (uint32_t d : extra_deps)
      if (std::find(k.deps.begin(), k.deps.end(), d) == k.deps.end()) k.deps.push_back(d);
    last_on_stream_[stream] = k.id;
    t.kernels.push_back(std::move(k));
    return t.kernels.back().id;
  }
  KernelRecord& k(uint32_t id) { return t.kernels[id]; }

  void strided(uint32_t kernel, uint32_t tensor, bool write, uint64_t cta_first, uint64_t cta_count, uint64_t base,
               int64_t cta_stride, uint64_t elem_bytes, uint64_t count, int64_t stride) {
    if (cta_count == 0 || count == 0 || elem_bytes == 0) return;
    AccessRecord a;
    a.kernel = kernel;
    a.cta_first = checked_u32(cta_first, "cta index");
    a.cta_count = checked_u32(cta_count, "cta count");
    a.kind = AccessRecord::Kind::strided;
    a.write = write;
    a.tensor = tensor;
    a.base = base;
    a.cta_stride_bytes = cta_stride;
    a.elem_bytes = checked_u32(elem_bytes, "element bytes");
    a.count = count;
    a.stride_bytes = stride;
    t.accesses.push_back(std::move(a));
  }

  void gather(uint32_t kernel, uint32_t tensor, uint64_t cta_first, uint64_t cta_count, uint64_t base,
              uint32_t row_bytes, uint64_t row_pitch, std::vector<uint32_t> rows) {
    if (cta_count == 0 || rows.empty()) return;
    AccessRecord a;
    a.kernel = kernel;
    a.cta_first = checked_u32(cta_first, "cta index");
    a.cta_count = checked_u32(cta_count, "cta count");
    a.kind = AccessRecord::Kind::gather;
    a.tensor = tensor;
    a.base = base;
    a.row_bytes = row_bytes;
    a.row_pitch_bytes = row_pitch;
    a.rows = std::move(rows);
    t.accesses.push_back(std::move(a));
  }

 private:
  std::vector<int64_t> last_on_stream_;
};

}  // namespace indexsim::trace::detail
