// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/emulate.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

#include "traces/generators/launch.hpp"
#include "traces/kernel_geometry.hpp"

namespace indexsim::trace {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Bytes of `elems` elements of `bits` each (FP4 packs two per byte).
uint64_t bytes_of(uint64_t elems, uint32_t bits) { return (elems * bits + 7) / 8; }

uint32_t checked_u32(uint64_t v, const char* what) {
  if (v > UINT32_MAX) throw std::invalid_argument(std::string(what) + " exceeds 2^32-1: " + std::to_string(v));
  return static_cast<uint32_t>(v);
}

// Portable randomness: std::uniform_*_distribution differ across standard libraries, so every draw
// is derived from raw mt19937_64 output here.
uint64_t splitmix64(uint64_t x) {
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
uint64_t sub_seed(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
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
                  const KernelShape& ks, std::vector<uint32_t> extra_deps = {}, uint32_t stream = 0) {
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

// The operands of one GEMM C[m×n] = A[m×k]·B[n×k]ᵀ: where they live and their element sizes.
struct GemmOperands {
  uint32_t a_tensor = 0, b_tensor = 0, c_tensor = 0;
  uint64_t a_base = 0, b_base = 0, c_base = 0;
  uint32_t a_bits = 16, b_bits = 16, c_bits = 16;
};

// How a GEMM's output tiles map to CTAs: tile_m x tile_n, and TMA multicast pairs that share one
// operand's loads (each CTA of the pair fetches half the shared panel for both).
struct GemmTiling {
  uint64_t tm = 128, tn = 256;
  uint32_t multicast = 1;
  bool on_a = true;
};

// Per-CTA reads of the A row-panel and the B column-panel and the write of the C tile, for the CTAs
// [cta0, cta0 + mt·nt), n tile fastest inside each m-tile row. With multicast on A, the pairs
// (2p, 2p+1) of a row share the A panel: the row's CTAs are ordered left members, right members
// (then a lone last tile), each member reading its half. With multicast on B, m-tile rows 2q and
// 2q+1 share the B panels, each reading half of every panel.
void gemm_accesses(Builder& b, uint32_t kernel, uint64_t cta0, uint64_t m, uint64_t n, uint64_t kdim,
                   const GemmTiling& t, const GemmOperands& o) {
  const uint64_t tm = t.tm, tn = t.tn;
  const uint64_t mt = ceil_div(m, tm), nt = ceil_div(n, tn), nrem = n % tn;
  const uint64_t a_row = bytes_of(kdim, o.a_bits), b_row = bytes_of(kdim, o.b_bits), c_pitch = bytes_of(n, o.c_bits);
  struct Part {
    uint64_t h = 0, parts = 1;
    uint64_t lo(uint64_t w) const { return w * h / parts; }
    uint64_t hi(uint64_t w) const { return w * (h + 1) / parts; }
  };
  // Tiles j0, j0 + step, ... (count of them) of m-tile row i, on CTAs [first, first + count).
  auto run = [&](uint64_t i, uint64_t first, uint64_t j0, uint64_t step, uint64_t count, Part pa, Part pb) {
    if (count == 0) return;
    const uint64_t rows = std::min(tm, m - i * tm);
    b.strided(kernel, o.a_tensor, false, first, count, o.a_base + (i * tm + pa.lo(rows)) * a_row, 0, a_row,
              pa.hi(rows) - pa.lo(rows), int64_t(a_row));
    const bool partial = nrem && j0 + (count - 1) * step == nt - 1;
    const uint64_t full = partial ? count - 1 : count;
    const uint64_t c_base = o.c_base + i * tm * c_pitch;
    b.strided(kernel, o.b_tensor, false, first, full, o.b_base + (j0 * tn + pb.lo(tn)) * b_row, int64_t(step * tn * b_row),
              b_row, pb.hi(tn) - pb.lo(tn), int64_t(b_row));
    b.strided(kernel, o.c_tensor, true, first, full, c_base + bytes_of(j0 * tn, o.c_bits), int64_t(bytes_of(step * tn, o.c_bits)),
              bytes_of(tn, o.c_bits), rows, int64_t(c_pitch));
    if (partial) {
      const uint64_t last = first + full, j = nt - 1;
      b.strided(kernel, o.b_tensor, false, last, 1, o.b_base + (j * tn + pb.lo(nrem)) * b_row, 0, b_row,
                pb.hi(nrem) - pb.lo(nrem), int64_t(b_row));
      b.strided(kernel, o.c_tensor, true, last, 1, c_base + bytes_of(j * tn, o.c_bits), 0, bytes_of(nrem, o.c_bits), rows,
                int64_t(c_pitch));
    }
  };
  for (uint64_t i = 0; i < mt; ++i) {
    const uint64_t first = cta0 + i * nt;
    if (t.multicast == 2 && t.on_a && nt >= 2) {
      const uint64_t np = nt / 2;
      run(i, first, 0, 2, np, {0, 2}, {});
      run(i, first + np, 1, 2, np, {1, 2}, {});
      if (nt % 2) run(i, first + 2 * np, nt - 1, 1, 1, {}, {});
    } else if (t.multicast == 2 && !t.on_a && (i % 2 == 1 || i + 1 < mt)) {
      run(i, first, 0, 1, nt, {}, {i % 2, 2});
    } else {
      run(i, first, 0, 1, nt, {}, {});
    }
  }
}

// The arithmetic a planned GEMM does: the Tensor Cores compute whole tiles (TMA fills the edges of
// a partial tile with zeros), and DeepGEMM's FP8 kernel rescales and adds each 128-deep partial sum
// on the CUDA cores (one FFMA per accumulator element per K block).
void gemm_flops(KernelRecord& k, const GemmLaunch& g, uint64_t kdim, Precision p) {
  const double tile_elems = double(g.tiles) * g.block_m * g.block_n;
  k.flops[static_cast<int>(p)] = 2.0 * tile_elems * double(kdim);
  if (g.promotion) k.flops[static_cast<int>(Precision::simt)] = 2.0 * tile_elems * double(ceil_div(kdim, g.block_k));
}

KernelShape gemm_kernel_shape(const GemmLaunch& g) {
  return KernelShape{g.threads, static_cast<uint32_t>(g.smem_bytes), g.regs_per_thread};
}

GemmTiling gemm_tiling(const GemmLaunch& g) { return GemmTiling{g.block_m, g.block_n, g.multicast, g.multicast_on_a}; }

// One sparse MLA attention over selected KV rows, for `batch` sequences of `q_per_seq` queries; the
// queries of one q-tile of a sequence share rows[s · tiles + j].
struct SparseMla {
  std::string name;
  int layer = -1;
  uint64_t heads = 0, batch = 1, q_per_seq = 1, q_tile = 64, context = 0;
  uint64_t kv_row_bytes = 0, d_latent = 512, d_rope = 64, index_entries = 0;
  Precision compute = Precision::bf16;
  uint32_t kv = 0, indices = 0, q = 0, out = 0, workspace = 0;
  std::vector<uint32_t> deps;
  const std::vector<std::vector<uint32_t>>* rows = nullptr;
};

// Sparse MLA decode/prefill over the selected rows as the project's split-KV kernel runs it
// (kernels/sparse_attn.cu, geometry in traces/kernel_geometry.hpp; FlashMLA's sparse decode splits
// the same way): a CTA owns 64 heads of one query and one split of its selected rows; with more
// than one split, a combine kernel merges the partial outputs. Grid (head blocks x splits,
// queries) as CUDA launches it, CTAs numbered as geometry::sparse_attn_cta says (CUDA's order for
// decode-sized grids). Returns the workspace bytes it needs.
uint64_t sparse_mla(Builder& b, const SparseMla& a, const LaunchLimits& lim) {
  namespace geo = geometry;
  const uint64_t H = a.heads, B = a.batch, T = a.q_per_seq, kvb = a.kv_row_bytes, kt = a.index_entries;
  const uint64_t nq_tiles = ceil_div(T, a.q_tile);
  const uint64_t Q = B * T;  // queries: sequence-major, then new token
  const uint64_t HB = ceil_div(H, uint64_t(geo::kAttnHeadsPerCta));
  // Rows each query attends to (pooled entries expand to tokens): the topk the kernel is sized for.
  const uint64_t sel = a.rows->empty() ? kt : a.rows->front().size();
  const int S = geo::sparse_attn_splits(int(std::max<uint64_t>(sel, 1)), int(H), int(Q), int(lim.units));
  const uint64_t per = uint64_t(geo::sparse_attn_rows_per_split(int(std::max<uint64_t>(sel, 1)), S));
  const bool fp8 = kvb <= uint64_t(geo::kKvFp8RowBytes);
  // FP8 rows: two raw staging tiles where they fit (Hopper), else one (A100: 163 KiB a CTA).
  uint64_t smem = fp8 ? geo::kAttnSmemFp8 : geo::kAttnSmemBf16;
  if (fp8 && smem > lim.smem_per_cta_bytes) smem -= uint64_t(geo::kAttnTileRows) * geo::kKvFp8RowBytes;
  if (smem > lim.smem_per_cta_bytes)
    throw std::invalid_argument(a.name + ": the split-KV kernel needs " + std::to_string(smem) +
                                " B of shared memory per CTA, the device allows " + std::to_string(lim.smem_per_cta_bytes));
  const KernelShape ks{uint32_t(geo::kAttnThreads), uint32_t(smem), 128};
  const uint32_t id = b.kernel(a.name, KernelKind::sparse_attn, a.layer, {HB * uint64_t(S), Q, 1}, ks, a.deps);
  const uint64_t q_row = H * (a.d_latent + a.d_rope) * 2;  // one query's BF16 heads
  const uint64_t dv = a.d_latent;  // absorbed MLA: the output stays in the latent space until o_absorb
  const uint64_t part_row = H * (dv * 4 + 4);  // FP32 partial output + LSE per split
  double rows_total = 0;
  const bool cuda_order = geo::sparse_attn_cuda_order(Q, HB, uint64_t(S));
  for (uint64_t h = 0; h < HB; ++h) {
    const uint64_t heads = std::min<uint64_t>(geo::kAttnHeadsPerCta, H - h * geo::kAttnHeadsPerCta);
    const uint64_t q_off = h * geo::kAttnHeadsPerCta * (q_row / H), q_bytes = heads * (q_row / H);
    for (uint64_t sp = 0; sp < uint64_t(S); ++sp) {
      const uint64_t idx_per = ceil_div(kt, uint64_t(S)), idx_lo = std::min(kt, sp * idx_per);
      const uint64_t idx_bytes = std::min(idx_per, kt - idx_lo) * 4;
      const uint64_t w_off = S > 1 ? sp * part_row + h * geo::kAttnHeadsPerCta * (part_row / H)
                                   : h * geo::kAttnHeadsPerCta * dv * 4;
      const uint32_t w_tensor = S > 1 ? a.workspace : a.out;
      const uint64_t w_pitch = S > 1 ? uint64_t(S) * part_row : H * dv * 4;
      const uint64_t w_bytes = S > 1 ? heads * (part_row / H) : heads * dv * 4;
      // The rows of split sp of query tile j of sequence s.
      auto split_rows = [&](uint64_t s, uint64_t j) {
        const auto& rows = (*a.rows)[s * nq_tiles + j];
        const uint64_t lo = std::min<uint64_t>(rows.size(), sp * per), hi = std::min<uint64_t>(rows.size(), lo + per);
        return std::vector<uint32_t>(rows.begin() + long(lo), rows.begin() + long(hi));
      };
      if (cuda_order) {  // one record per CTA, numbered as CUDA does
        for (uint64_t q = 0; q < Q; ++q) {
          const uint64_t c = geo::sparse_attn_cta(q, h, sp, Q, HB, uint64_t(S)), s = q / T, j = (q % T) / a.q_tile;
          b.strided(id, a.q, false, c, 1, q * q_row + q_off, 0, q_bytes, 1, 0);
          b.strided(id, a.indices, false, c, 1, q * kt * 4 + idx_lo * 4, 0, idx_bytes, 1, 0);
          std::vector<uint32_t> r = split_rows(s, j);
          if (h == 0) rows_total += double(r.size());
          b.gather(id, a.kv, c, 1, s * a.context * kvb, static_cast<uint32_t>(kvb), kvb, std::move(r));
          b.strided(id, w_tensor, true, c, 1, q * w_pitch + w_off, 0, w_bytes, 1, 0);
        }
        continue;
      }
      const uint64_t c0 = geo::sparse_attn_cta(0, h, sp, Q, HB, uint64_t(S));
      b.strided(id, a.q, false, c0, Q, q_off, int64_t(q_row), q_bytes, 1, 0);
      b.strided(id, a.indices, false, c0, Q, idx_lo * 4, int64_t(kt * 4), idx_bytes, 1, 0);
      for (uint64_t s = 0; s < B; ++s)
        for (uint64_t j = 0; j < nq_tiles; ++j) {
          const uint64_t t0 = j * a.q_tile, qn = std::min(T, t0 + a.q_tile) - t0;
          std::vector<uint32_t> r = split_rows(s, j);
          if (h == 0) rows_total += double(r.size()) * qn;
          b.gather(id, a.kv, c0 + s * T + t0, qn, s * a.context * kvb, static_cast<uint32_t>(kvb), kvb, std::move(r));
        }
      b.strided(id, w_tensor, true, c0, Q, w_off, int64_t(w_pitch), w_bytes, 1, 0);
    }
  }
  // Absorbed MLA on the Tensor Cores, 64 head rows per CTA also past the local heads: q·k over the
  // latent and RoPE parts, then p·v over the latent, per selected row. Softmax (and, for FP8 rows,
  // the dequantisation of every gathered latent value) on the CUDA cores.
  const double padded_heads = double(HB * geo::kAttnHeadsPerCta);
  b.k(id).flops[static_cast<int>(a.compute)] = 2.0 * padded_heads * (2.0 * a.d_latent + a.d_rope) * rows_total;
  b.k(id).flops[static_cast<int>(Precision::simt)] =
      4.0 * double(H) * rows_total + (fp8 ? 2.0 * a.d_latent * rows_total * double(HB) : 0.0);
  if (S == 1) return 0;
  const KernelShape cs{uint32_t(geo::kAttnCombineThreads), 0, 32};
  const uint32_t c = b.kernel(a.name + "_combine", KernelKind::sparse_attn, a.layer, {H, Q, 1}, cs);
  // CTA (head, query) = query·H + head reads that head's S partial rows and LSEs, writes its output.
  for (uint64_t q = 0; q < Q; ++q) {
    for (uint64_t sp = 0; sp < uint64_t(S); ++sp)
      b.strided(c, a.workspace, false, q * H, H, (q * S + sp) * part_row, int64_t(part_row / H), part_row / H, 1, 0);
    b.strided(c, a.out, true, q * H, H, q * H * dv * 4, int64_t(dv * 4), dv * 4, 1, 0);
  }
  b.k(c).flops[int(Precision::simt)] = 2.0 * double(Q) * double(H) * double(S) * dv;
  return Q * uint64_t(S) * part_row;
}

class StepEmulator {
 public:
  StepEmulator(const ModelShape& m, const StepParams& p, const LaunchLimits& lim)
      : m_(m), p_(p), lim_(lim), T_(p.new_tokens()) {}

  TraceData run() {
    validate(p_);
    if (p_.context > UINT32_MAX) throw std::invalid_argument("context must fit in 32 bits (row indices)");
    build_global_tensors();
    for (const LayerShape& l : m_.layers) layer(l);
    lm_head();
    finish_metadata();
    b_.t.tensors[act_in_].bytes = act_bytes_;
    b_.t.tensors[act_out_].bytes = act_bytes_;
    b_.t.tensors[workspace_].bytes = std::max<uint64_t>(workspace_bytes_, 1);
    return std::move(b_.t);
  }

 private:
  const ModelShape& m_;
  const StepParams& p_;
  const LaunchLimits lim_;
  const uint64_t T_;
  Builder b_;
  TopkPicker picker_;
  uint32_t act_in_ = 0, act_out_ = 0, logits_ = 0, lm_w_ = 0, workspace_ = 0;
  uint64_t workspace_bytes_ = 0;
  uint64_t act_bytes_ = 0;
  // Per full layer: its top-k kernel, index tensor and the rows each (sequence, query tile) picked,
  // reused by the shared layers that follow.
  struct TopkResult {
    uint32_t kernel = 0, tensor = 0;
    std::vector<std::vector<uint32_t>> rows;  // [s * tiles + j]
  };
  std::map<int, TopkResult> topk_;

  uint64_t tokens() const { return uint64_t(p_.batch) * T_; }
  uint32_t wbits() const { return precision_bits(m_.weight_precision); }
  uint64_t q_tiles() const { return ceil_div(T_, m_.kernels.indexer_q_tile_tokens); }
  // Queries [a, b) of query tile j; the last one sees `visible` tokens.
  uint64_t tile_begin(uint64_t j) const { return j * m_.kernels.indexer_q_tile_tokens; }
  uint64_t tile_end(uint64_t j) const { return std::min<uint64_t>(T_, (j + 1) * m_.kernels.indexer_q_tile_tokens); }
  uint64_t visible(uint64_t t) const { return p_.context - T_ + t + 1; }  // tokens seen by new token t

  std::string lname(int layer, const std::string& what) const { return "L" + std::to_string(layer) + "." + what; }

  void build_global_tensors() {
    act_in_ = b_.tensor("act.in", TensorClass::activations, -1, 0);
    act_out_ = b_.tensor("act.out", TensorClass::activations, -1, 0);
    b_.tensor("embedding", TensorClass::weights, -1, m_.weight_bytes(m_.embedding_params() / 2));
    lm_w_ = b_.tensor("lm_head", TensorClass::weights, -1, m_.weight_bytes(m_.embedding_params() / 2));
    if (m_.count_indexer_layers() > 0)
      logits_ = b_.tensor("indexer_logits", TensorClass::scratch, -1,
                          tokens() * m_.indexer_entries(p_.context) * 4);
    // Top-k and split-KV attention scratch (sized once every kernel is built).
    workspace_ = b_.tensor("kernel_workspace", TensorClass::scratch, -1, 0);
  }

  // A projection GEMM: activations [tokens × K] times weights [N × K] (slice at w_base of w_tensor),
  // launched as plan_gemm picks for this device (DeepGEMM for FP8 on Hopper, else CUTLASS tiles).
  uint32_t gemm(int layer, const std::string& what, KernelKind kind, uint64_t M, uint64_t N, uint64_t K,
                uint32_t w_tensor, uint64_t w_base, std::vector<uint32_t> deps = {}) {
    GemmProblem prob;
    prob.m = M, prob.n = N, prob.k = K, prob.precision = m_.weight_precision;
    const GemmLaunch g = plan_gemm(prob, lim_);
    const uint64_t mt = ceil_div(M, g.block_m), nt = ceil_div(N, g.block_n);
    const uint32_t id = b_.kernel(lname(layer, what), kind, layer, {nt, mt, 1}, gemm_kernel_shape(g), std::move(deps));
    gemm_flops(b_.k(id), g, K, m_.weight_precision);
    GemmOperands o;
    o.a_tensor = act_in_;
    o.b_tensor = w_tensor;
    o.b_base = w_base;
    o.c_tensor = act_out_;
    o.a_bits = wbits();  // activations are quantised to the weights' precision before the GEMM
    o.b_bits = wbits();
    o.c_bits = 16;
    gemm_accesses(b_, id, 0, M, N, K, gemm_tiling(g), o);
    act_bytes_ = std::max({act_bytes_, bytes_of(M * K, 16), bytes_of(M * N, 16)});
    return id;
  }

  void layer(const LayerShape& l) {
    if (l.attention == AttentionKind::dsa) dsa_layer(l);
    else linear_layer(l);
    if (l.mlp == MlpKind::dense) dense_mlp(l);
    else moe(l);
  }

  void dsa_layer(const LayerShape& l) {
    const int L = l.index;
    const auto& a = m_.mla;
    const uint64_t H = m_.local_heads(), h = m_.hidden_size, M = tokens(), B = p_.batch;
    const auto params = m_.layer_params(L);
    const uint32_t w = b_.tensor(lname(L, "attn_w"), TensorClass::weights, L, m_.weight_bytes(params.attention));
    const uint64_t kvb = a.kv_bytes_per_token;
    const uint32_t kv = b_.tensor(lname(L, "kv_cache"), TensorClass::kv_cache, L, B * p_.context * kvb);

    uint64_t off = 0;
    const uint64_t n_qkv_a = a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim;
    gemm(L, "qkv_a_proj", KernelKind::gemm, M, n_qkv_a, h, w, off);
    off += bytes_of(n_qkv_a * h, wbits());
    if (l.indexer == IndexerMode::full) indexer(l);

    const uint64_t n_qb = H * (a.qk_nope_head_dim + a.qk_rope_head_dim);
    gemm(L, "q_b_proj", KernelKind::gemm, M, n_qb, a.q_lora_rank, w, off);
    off += bytes_of(n_qb * a.q_lora_rank, wbits());
    // The nope part of the query is absorbed into the latent space (W_UK, per head).
    gemm(L, "q_absorb", KernelKind::gemm, M, H * a.kv_lora_rank, a.qk_nope_head_dim, w, off);
    off += bytes_of(H * a.kv_lora_rank * a.qk_nope_head_dim, wbits());

    const uint32_t app = b_.kernel(lname(L, "kv_append"), KernelKind::kv_append, L, {B, 1, 1}, m_.kernels.elementwise);
    b_.strided(app, kv, true, 0, B, (p_.context - T_) * kvb, int64_t(p_.context * kvb), T_ * kvb, 1, 0);

    sparse_attention(l, kv);

    const uint64_t n_ov = H * a.v_head_dim;
    gemm(L, "o_absorb", KernelKind::gemm, M, n_ov, a.kv_lora_rank, w, off);  // W_UV back from the latent
    off += bytes_of(n_ov * a.kv_lora_rank, wbits());
    gemm(L, "o_proj", KernelKind::gemm, M, h, n_ov, w, off);
  }

  void indexer(const LayerShape& l) {
    const int L = l.index;
    const auto& ix = m_.indexer;
    const auto& ks = m_.kernels;
    const uint64_t IH = m_.local_index_heads(), M = tokens(), B = p_.batch, h = m_.hidden_size;
    const uint64_t eb = ix.bytes_per_entry(), cap = m_.indexer_entries(p_.context), pool = ix.pool_tokens;
    const uint32_t w = b_.tensor(lname(L, "indexer_w"), TensorClass::weights, L,
                                 m_.weight_bytes(m_.layer_params(L).indexer));
    const uint32_t cache = b_.tensor(lname(L, "indexer_cache"), TensorClass::indexer_cache, L, B * cap * eb);
    const uint64_t kt = ix.topk / pool;  // entries selected per query
    const uint32_t idx = b_.tensor(lname(L, "topk_indices"), TensorClass::topk_indices, L, M * kt * 4);

    gemm(L, "index_k_proj", KernelKind::gemm, M, ix.head_dim + IH, h, w, 0);  // wk and weights_proj
    gemm(L, "index_q_proj", KernelKind::gemm, M, IH * ix.head_dim, m_.mla.q_lora_rank, w,
         bytes_of((ix.head_dim + IH) * h, wbits()));

    // Append: rewrite from the first incomplete pool to the end (with pool 1: the T new keys), reading
    // the old raw tail of an incomplete pool back to pool it with the new keys.
    const uint64_t old_ctx = p_.context - T_, first_slot = old_ctx / pool;
    const uint64_t old_tail = old_ctx % pool;
    const uint32_t app = b_.kernel(lname(L, "index_append"), KernelKind::index_append, L, {B, 1, 1}, ks.elementwise);
    b_.strided(app, cache, false, 0, B, first_slot * eb, int64_t(cap * eb), old_tail * eb, 1, 0);
    b_.strided(app, cache, true, 0, B, first_slot * eb, int64_t(cap * eb), (cap - first_slot) * eb, 1, 0);
    if (pool > 1) b_.k(app).flops[static_cast<int>(Precision::simt)] = double(B) * T_ * ix.head_dim * 4.0;

    // Scoring: per sequence and query tile, CTAs over tiles of the entries the tile's last query sees.
    const uint64_t tt = ks.indexer_tile_tokens, nq = q_tiles();
    std::vector<uint64_t> tiles_before(nq + 1, 0);
    for (uint64_t j = 0; j < nq; ++j)
      tiles_before[j + 1] = tiles_before[j] + ceil_div(m_.indexer_entries(visible(tile_end(j) - 1)), tt);
    const uint64_t X = tiles_before[nq];
    const uint32_t sc = b_.kernel(lname(L, "indexer_score"), KernelKind::indexer_score, L, {X, B, 1}, ks.indexer_score);
    double flops = 0;
    for (uint64_t t = 0; t < T_; ++t) flops += 2.0 * IH * ix.head_dim * double(m_.indexer_entries(visible(t)));
    b_.k(sc).flops[static_cast<int>(ix.score_precision)] = flops * B;
    const uint64_t row4 = cap * 4;  // one query's logits row
    for (uint64_t s = 0; s < B; ++s)
      for (uint64_t j = 0; j < nq; ++j) {
        const uint64_t e = m_.indexer_entries(visible(tile_end(j) - 1)), full = e / tt, rem = e % tt;
        const uint64_t c0 = s * X + tiles_before[j], qn = tile_end(j) - tile_begin(j);
        b_.strided(sc, cache, false, c0, full, s * cap * eb, int64_t(tt * eb), tt * eb, 1, 0);
        b_.strided(sc, cache, false, c0 + full, rem ? 1 : 0, s * cap * eb + full * tt * eb, 0, rem * eb, 1, 0);
        const uint64_t lbase = (s * T_ + tile_begin(j)) * row4;
        b_.strided(sc, logits_, true, c0, full, lbase, int64_t(tt * 4), tt * 4, qn, int64_t(row4));
        b_.strided(sc, logits_, true, c0 + full, rem ? 1 : 0, lbase + full * tt * 4, 0, rem * 4, qn, int64_t(row4));
      }

    const uint32_t tk = topk(L, idx, row4, kt);
    TopkResult r;
    r.kernel = tk;
    r.tensor = idx;
    r.rows.resize(B * nq);
    for (uint64_t s = 0; s < B; ++s)
      for (uint64_t j = 0; j < nq; ++j) r.rows[s * nq + j] = pick_rows(L, s, j);
    topk_[L] = std::move(r);
  }

  // The token rows the last query of tile j of sequence s attends to; the tile's other queries share
  // them (an approximation for prefill, where neighbouring queries' picks overlap heavily; in decode
  // a tile holds all of a sequence's new tokens). With pooled keys, top-k picks pooled entries that
  // expand to `pool` consecutive tokens, and the incomplete tail pool is always in.
  std::vector<uint32_t> pick_rows(int layer, uint64_t s, uint64_t j) {
    Rng rng(sub_seed(p_.seed, uint64_t(layer), s, j));
    const uint64_t n = visible(tile_end(j) - 1), pool = m_.indexer.pool_tokens;
    if (pool == 1) return picker_.pick(n, m_.indexer.topk, m_.selection, rng);
    TopkSelection sel = m_.selection;
    sel.sink_tokens = static_cast<uint32_t>(ceil_div(sel.sink_tokens, pool));
    sel.recent_tokens = static_cast<uint32_t>(ceil_div(sel.recent_tokens, pool));
    const uint64_t complete = n / pool;
    const auto entries = picker_.pick(complete, m_.indexer.topk / pool, sel, rng);
    std::vector<uint32_t> rows;
    rows.reserve(entries.size() * pool + pool);
    for (uint32_t e : entries)
      for (uint64_t i = 0; i < pool; ++i) rows.push_back(static_cast<uint32_t>(e * pool + i));
    for (uint64_t i = complete * pool; i < n; ++i) rows.push_back(static_cast<uint32_t>(i));
    return rows;
  }

  // Top-k of every query's logits row as the project's radix select runs it (kernels/topk.cu,
  // geometry in traces/kernel_geometry.hpp): every pass spreads each row over 4096-score chunks,
  // one CTA each, so a million-entry row keeps the whole GPU busy. Rows are as long as the tile's
  // last query sees (the kernel scans a fixed n per row). Kernels: init, 3 x (histogram, pick),
  // count of the threshold ties, ordered collection, bitonic sort of the k winners. Returns the sort.
  uint32_t topk(int L, uint32_t idx, uint64_t row4, uint64_t kt) {
    namespace geo = geometry;
    const uint64_t rows = tokens(), nq = q_tiles();
    const uint64_t n = m_.indexer_entries(visible(tile_end(nq - 1) - 1));
    const uint64_t chunks = uint64_t(geo::topk_chunks(int64_t(n))), chunk_bytes = uint64_t(geo::kTopkChunk) * 4;
    const KernelShape row_cta{uint32_t(geo::kTopkThreads), 0, 32}, sort_cta{uint32_t(geo::kTopkSortThreads), 0, 32};
    // Workspace (topk_workspace_bytes): per row a state, the histogram, one tie count per chunk and
    // the winners (8 B: key and index).
    const uint64_t hist = uint64_t(geo::kTopkBins) * 4, eq = chunks * 4, win = kt * 8, state = 64;
    const uint64_t ws_row = state + hist + eq + win;
    workspace_bytes_ = std::max(workspace_bytes_, rows * ws_row);
    const uint64_t o_hist = state, o_eq = o_hist + hist, o_win = o_eq + eq;  // offsets inside a row's workspace
    // Chunk c of row r reads scores [c·4096, (c+1)·4096) of its row. The records number the CTAs
    // row-major (r·chunks + c, as CUDA does) when there are fewer rows than chunks, chunk-major
    // otherwise, so that a decode row of a million scores and a prefill chunk of thousands of short
    // rows both stay a few records per kernel.
    const bool by_row = rows <= chunks;
    auto grid2d = [&](uint32_t k, uint32_t tensor, bool write, uint64_t base, uint64_t row_stride, uint64_t col_stride,
                      uint64_t full_bytes, uint64_t last_bytes) {
      if (by_row) {
        for (uint64_t r = 0; r < rows; ++r) {
          b_.strided(k, tensor, write, r * chunks, chunks - 1, base + r * row_stride, int64_t(col_stride), full_bytes, 1, 0);
          b_.strided(k, tensor, write, r * chunks + chunks - 1, 1, base + r * row_stride + (chunks - 1) * col_stride, 0,
                     last_bytes, 1, 0);
        }
      } else {
        for (uint64_t c = 0; c < chunks; ++c)
          b_.strided(k, tensor, write, c * rows, rows, base + c * col_stride, int64_t(row_stride),
                     c + 1 == chunks ? last_bytes : full_bytes, 1, 0);
      }
    };
    const uint64_t last_scores = n - (chunks - 1) * geo::kTopkChunk;
    auto scan = [&](uint32_t k) {
      grid2d(k, logits_, false, 0, row4, chunk_bytes, chunk_bytes, last_scores * 4);
      b_.k(k).flops[int(Precision::simt)] = double(rows) * double(n) * 4.0;
    };
    const uint32_t init = b_.kernel(lname(L, "topk_init"), KernelKind::topk, L, {rows, 1, 1}, row_cta);
    b_.strided(init, workspace_, true, 0, rows, 0, int64_t(ws_row), state + hist, 1, 0);
    for (int pass = 0; pass < geo::kTopkPasses; ++pass) {
      const uint64_t bins = uint64_t(geo::kTopkPassBins[pass]);
      const uint32_t h = b_.kernel(lname(L, "topk_hist" + std::to_string(pass)), KernelKind::topk, L, {chunks, rows, 1}, row_cta);
      scan(h);
      // Each chunk adds its block histogram to its row's (global atomics on the bins).
      grid2d(h, workspace_, true, o_hist, ws_row, 0, bins * 4, bins * 4);
      const uint32_t pk = b_.kernel(lname(L, "topk_pick" + std::to_string(pass)), KernelKind::topk, L, {rows, 1, 1}, row_cta);
      b_.strided(pk, workspace_, false, 0, rows, o_hist, int64_t(ws_row), bins * 4, 1, 0);
      b_.strided(pk, workspace_, true, 0, rows, 0, int64_t(ws_row), state + bins * 4, 1, 0);
      b_.k(pk).flops[int(Precision::simt)] = double(rows) * double(bins);
    }
    const uint32_t ce = b_.kernel(lname(L, "topk_count_eq"), KernelKind::topk, L, {chunks, rows, 1}, row_cta);
    scan(ce);
    grid2d(ce, workspace_, true, o_eq, ws_row, 4, 4, 4);
    const uint32_t co = b_.kernel(lname(L, "topk_collect"), KernelKind::topk, L, {chunks, rows, 1}, row_cta);
    scan(co);
    // Each chunk writes its share of the row's k winners.
    const uint64_t share = std::max<uint64_t>(8, ceil_div(kt, chunks) * 8);
    grid2d(co, workspace_, true, o_win, ws_row, std::min(share, win), std::min(share, win), std::min(share, win));
    const uint32_t so = b_.kernel(lname(L, "topk_sort"), KernelKind::topk, L, {rows, 1, 1}, sort_cta);
    b_.strided(so, workspace_, false, 0, rows, o_win, int64_t(ws_row), win, 1, 0);
    b_.strided(so, idx, true, 0, rows, 0, int64_t(kt * 4), kt * 4, 1, 0);
    uint64_t len = 1;
    while (len < kt) len <<= 1;
    b_.k(so).flops[int(Precision::simt)] = double(rows) * double(len) * 11 * 12 / 2;  // bitonic compare-exchanges
    return so;
  }

  void sparse_attention(const LayerShape& l, uint32_t kv) {
    const int L = l.index;
    const auto& a = m_.mla;
    const TopkResult& src = topk_.at(l.topk_source);
    SparseMla sm;
    sm.name = lname(L, "sparse_attn");
    sm.layer = L;
    sm.heads = m_.local_heads();
    sm.batch = p_.batch;
    sm.q_per_seq = T_;
    sm.q_tile = m_.kernels.indexer_q_tile_tokens;
    sm.context = p_.context;
    sm.kv_row_bytes = a.kv_bytes_per_token;
    sm.d_latent = a.kv_lora_rank;
    sm.d_rope = a.qk_rope_head_dim;
    sm.index_entries = m_.indexer.topk / m_.indexer.pool_tokens;
    sm.compute = a.compute_precision;
    sm.kv = kv;
    sm.indices = src.tensor;
    sm.q = act_in_;
    sm.out = act_out_;
    sm.workspace = workspace_;
    // The data dependency on the top-k is explicit even where stream order implies it, so that a
    // transform moving kernels to other streams keeps it; a shared layer names an earlier layer's.
    sm.deps = {src.kernel};
    sm.rows = &src.rows;
    workspace_bytes_ = std::max(workspace_bytes_, sparse_mla(b_, sm, lim_));
  }

  void linear_layer(const LayerShape& l) {
    const int L = l.index;
    const auto& lin = m_.linear;
    const uint64_t H = m_.local_linear_heads(), HD = H * lin.head_dim, h = m_.hidden_size, M = tokens(),
                   B = p_.batch;
    const uint32_t w = b_.tensor(lname(L, "attn_w"), TensorClass::weights, L,
                                 m_.weight_bytes(m_.layer_params(L).attention));
    const uint64_t per_seq = m_.linear_state_bytes_per_sequence(L);
    const uint32_t st = b_.tensor(lname(L, "linear_state"), TensorClass::linear_state, L, B * per_seq);
    gemm(L, "kda_in_proj", KernelKind::gemm, M, 4 * HD + H, h, w, 0);
    // One CTA per (head, sequence) holds the head's dk×dv state: read once, updated over the step's
    // tokens (recurrently in decode, chunk-wise on Tensor Cores in prefill), written back once.
    const uint32_t id = b_.kernel(lname(L, "linear_state_update"), KernelKind::linear_state, L, {H, B, 1}, m_.kernels.linear_state);
    const uint64_t head_bytes = per_seq / H;
    b_.strided(id, st, false, 0, H * B, 0, int64_t(head_bytes), head_bytes, 1, 0);
    b_.strided(id, st, true, 0, H * B, 0, int64_t(head_bytes), head_bytes, 1, 0);
    const Precision prec = p_.phase == Phase::decode ? Precision::simt : Precision::bf16;
    b_.k(id).flops[static_cast<int>(prec)] =
        lin.flops_per_token_per_head_per_dk_dv * double(lin.head_dim) * lin.head_dim * double(H) * double(M);
    gemm(L, "kda_o_proj", KernelKind::gemm, M, h, HD, w, bytes_of((4 * HD + H) * h, wbits()));
  }

  void dense_mlp(const LayerShape& l) {
    const int L = l.index;
    const uint64_t I = m_.mlp.dense_intermediate_size / m_.deployment.dense_tensor_parallel, h = m_.hidden_size;
    const uint32_t w = b_.tensor(lname(L, "mlp_w"), TensorClass::weights, L,
                                 m_.weight_bytes(m_.layer_params(L).dense_mlp));
    gemm(L, "mlp_up", KernelKind::gemm, tokens(), 2 * I, h, w, 0);
    gemm(L, "mlp_down", KernelKind::gemm, tokens(), h, I, w, bytes_of(2 * I * h, wbits()));
  }

  void moe(const LayerShape& l) {
    const int L = l.index;
    const auto& mlp = m_.mlp;
    const auto params = m_.layer_params(L);
    const uint64_t h = m_.hidden_size, M = tokens(), I = mlp.moe_intermediate_size;
    const uint32_t rw = b_.tensor(lname(L, "router_w"), TensorClass::weights, L, m_.weight_bytes(params.router));
    gemm(L, "router", KernelKind::gemm, M, mlp.routed_experts, h, rw, 0);
    if (mlp.shared_experts > 0) {
      const uint64_t Is = uint64_t(mlp.shared_experts) * I / m_.deployment.dense_tensor_parallel;
      const uint32_t sw = b_.tensor(lname(L, "shared_expert_w"), TensorClass::weights, L,
                                    m_.weight_bytes(params.shared_experts));
      gemm(L, "shared_up", KernelKind::gemm, M, 2 * Is, h, sw, 0);
      gemm(L, "shared_down", KernelKind::gemm, M, h, Is, sw, bytes_of(2 * Is * h, wbits()));
    }
    const uint64_t El = m_.local_routed_experts();
    const uint32_t ew = b_.tensor(lname(L, "experts_w"), TensorClass::weights, L, m_.weight_bytes(params.routed_experts));
    const uint32_t touched = experts_touched(static_cast<uint32_t>(El), mlp.active_experts, mlp.routed_experts, M);
    // Which local experts receive tokens (seeded): only where their weights sit.
    Rng rng(sub_seed(p_.seed, 0x6d6f65ull, uint64_t(L)));
    std::vector<uint32_t> ids(El);
    for (uint64_t i = 0; i < El; ++i) ids[i] = static_cast<uint32_t>(i);
    for (uint64_t i = 0; i < touched; ++i) std::swap(ids[i], ids[i + rng.below(El - i)]);
    ids.resize(touched);
    std::sort(ids.begin(), ids.end());
    // Token-expert pairs landing on this GPU under uniform routing: M · active · El / E.
    const double pairs = double(M) * mlp.active_experts * double(El) / mlp.routed_experts;
    const uint64_t rows = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(pairs / touched)));
    const uint64_t expert_bytes = bytes_of(m_.routed_expert_params(), wbits());
    grouped_gemm(L, "moe_up", rows, 2 * I, h, ew, ids, expert_bytes, 0);
    grouped_gemm(L, "moe_down", rows, h, I, ew, ids, expert_bytes, bytes_of(2 * I * h, wbits()));
  }

  // A grouped GEMM over the touched experts: each expert's `rows` tokens times its weights, as
  // DeepGEMM's grouped kernels run it (masked layout in decode, contiguous in prefill).
  void grouped_gemm(int L, const std::string& what, uint64_t rows, uint64_t N, uint64_t K, uint32_t w,
                    const std::vector<uint32_t>& experts, uint64_t expert_bytes, uint64_t part_off) {
    GemmProblem prob;
    prob.m = rows, prob.n = N, prob.k = K, prob.precision = m_.weight_precision;
    prob.groups = static_cast<uint32_t>(experts.size());
    prob.layout = p_.phase == Phase::decode ? GemmLayout::grouped_masked : GemmLayout::grouped_contiguous;
    const GemmLaunch g = plan_gemm(prob, lim_);
    const uint64_t per_expert = ceil_div(rows, g.block_m) * ceil_div(N, g.block_n);
    const uint32_t id = b_.kernel(lname(L, what), KernelKind::moe_gemm, L, {per_expert * experts.size(), 1, 1},
                                  gemm_kernel_shape(g));
    // The Tensor Cores compute every tile of the touched experts (padded rows included).
    GemmLaunch tiles = g;
    tiles.tiles = per_expert * experts.size();
    gemm_flops(b_.k(id), tiles, K, m_.weight_precision);
    GemmOperands o;
    o.a_tensor = act_in_;
    o.b_tensor = w;
    o.c_tensor = act_out_;
    o.a_bits = o.b_bits = wbits();
    GemmTiling t = gemm_tiling(g);
    t.multicast = 1;  // grouped kernels multicast only inside one expert's tiles: kept simple here
    for (size_t i = 0; i < experts.size(); ++i) {
      o.b_base = experts[i] * expert_bytes + part_off;
      o.a_base = i * rows * bytes_of(K, wbits());
      o.c_base = i * rows * bytes_of(N, 16);
      gemm_accesses(b_, id, i * per_expert, rows, N, K, t, o);
    }
    act_bytes_ = std::max({act_bytes_, bytes_of(experts.size() * rows * K, 16), bytes_of(experts.size() * rows * N, 16)});
  }

  void lm_head() {
    // Decode scores every new token (MTP drafts are verified); a prefill chunk samples its last token.
    const uint64_t M = p_.phase == Phase::decode ? tokens() : p_.batch;
    gemm(-1, "lm_head", KernelKind::gemm, M, m_.vocab_size / m_.deployment.attention_tensor_parallel, m_.hidden_size, lm_w_, 0);
    b_.k(static_cast<uint32_t>(b_.t.kernels.size() - 1)).name = "lm_head";
  }

  void finish_metadata() {
    auto& md = b_.t.metadata;
    md["source"] = "emulated";
    md["generator"] = kGeneratorVersion;
    md["workload"] = m_.name;
    md["workload_config"] = m_.resolved;
    md["step"] = p_.to_json();
    md["seed"] = p_.seed;
    nlohmann::json kinds = nlohmann::json::array();
    for (const auto& l : m_.layers)
      kinds.push_back(std::string(to_string(l.attention)) + (l.attention == AttentionKind::dsa ? std::string("/") + to_string(l.indexer) : "") +
                      "/" + to_string(l.mlp));
    md["layer_kinds"] = kinds;
    md["per_gpu"] = {{"heads", m_.local_heads()},
                     {"index_heads", m_.local_index_heads()},
                     {"routed_experts", m_.local_routed_experts()},
                     {"kv_cache", "replicated across attention TP (one latent per token)"},
                     {"indexer_cache", "replicated across attention TP (one key per token)"},
                     {"linear_state", "split with the heads"}};
  }
};

}  // namespace


uint32_t experts_touched(uint32_t local, uint32_t active, uint32_t total, uint64_t tokens) {
  const double miss = std::pow(1.0 - double(active) / total, double(tokens));
  const double e = std::round(local * (1.0 - miss));
  return static_cast<uint32_t>(std::clamp(e, 1.0, double(local)));
}

TraceData emulate_step(const ModelShape& shape, const StepParams& params, const LaunchLimits& limits) {
  return StepEmulator(shape, params, limits).run();
}

TraceData emulate_copy(uint64_t bytes, const CopyShape& shape) {
  if (bytes == 0) throw std::invalid_argument("copy bytes must be > 0");
  Builder b;
  const uint64_t chunk = uint64_t(shape.threads) * shape.vector_bytes;
  const uint64_t chunks = ceil_div(bytes, chunk);
  const uint64_t ctas = shape.ctas ? std::min<uint64_t>(shape.ctas, chunks) : std::min<uint64_t>(chunks, 65535);
  const std::string name = shape.write ? "copy" : "read";
  const uint32_t src = b.tensor(name + ".src", TensorClass::scratch, -1, bytes);
  const uint32_t dst = shape.write ? b.tensor("copy.dst", TensorClass::scratch, -1, bytes) : src;
  KernelShape ks;
  ks.threads = shape.threads;
  ks.regs_per_thread = 32;
  const uint32_t id = b.kernel(name, shape.write ? KernelKind::copy : KernelKind::read, -1, {ctas, 1, 1}, ks);
  // Grid-stride: CTA c moves chunks c, c + ctas, c + 2·ctas, ...; the last partial chunk goes alone.
  const uint64_t full_chunks = bytes / chunk, iters = full_chunks / ctas, extra = full_chunks % ctas;
  const int64_t stride = int64_t(ctas * chunk);
  for (const bool w : {false, true}) {
    if (w && !shape.write) break;
    const uint32_t t = w ? dst : src;
    b.strided(id, t, w, 0, extra, 0, int64_t(chunk), chunk, iters + 1, stride);
    b.strided(id, t, w, extra, ctas - extra, extra * chunk, int64_t(chunk), chunk, iters, stride);
    const uint64_t tail = bytes - full_chunks * chunk;
    b.strided(id, t, w, full_chunks % ctas, tail ? 1 : 0, full_chunks * chunk, 0, tail, 1, 0);
  }
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", name}, {"bytes", bytes}};
  return std::move(b.t);
}

TraceData emulate_sparse_mla_decode(const SparseMlaDecodeShape& sh, const LaunchLimits& limits) {
  if (sh.batch == 0 || sh.heads == 0 || sh.q_per_seq == 0 || sh.topk == 0 || sh.context < sh.topk)
    throw std::invalid_argument("sparse mla decode: batch, heads, s_q and topk must be > 0 and context >= topk");
  Builder b;
  const uint64_t Q = uint64_t(sh.batch) * sh.q_per_seq;
  SparseMla a;
  a.name = "sparse_mla_decode";
  a.heads = sh.heads;
  a.batch = sh.batch;
  a.q_per_seq = sh.q_per_seq;
  a.q_tile = sh.q_per_seq;  // decode: a sequence's queries share one selection
  a.context = sh.context;
  a.kv_row_bytes = sh.kv_row_bytes;
  a.index_entries = sh.topk;
  a.kv = b.tensor("kv_cache", TensorClass::kv_cache, -1, uint64_t(sh.batch) * sh.context * sh.kv_row_bytes);
  a.indices = b.tensor("topk_indices", TensorClass::topk_indices, -1, Q * sh.topk * 4);
  a.q = b.tensor("q", TensorClass::activations, -1, Q * sh.heads * (a.d_latent + a.d_rope) * 2);
  a.out = b.tensor("out", TensorClass::activations, -1, Q * sh.heads * a.d_latent * 4);
  a.workspace = b.tensor("workspace", TensorClass::scratch, -1, 1);
  // Selected rows: uniform over the context (seeded), one selection per sequence.
  std::vector<std::vector<uint32_t>> rows(sh.batch);
  TopkPicker picker;
  const TopkSelection uniform{0, 0, 1.0};
  for (uint32_t s = 0; s < sh.batch; ++s) {
    Rng rng(sub_seed(sh.seed, 0x5350u, s));
    rows[s] = picker.pick(sh.context, sh.topk, uniform, rng);
  }
  a.rows = &rows;
  b.t.tensors[a.workspace].bytes = std::max<uint64_t>(1, sparse_mla(b, a, limits));
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", "sparse_mla_decode"},
                  {"batch", sh.batch}, {"heads", sh.heads}, {"s_q", sh.q_per_seq}, {"topk", sh.topk},
                  {"context", sh.context}, {"kv_row_bytes", sh.kv_row_bytes},
                  {"launch", {{"library", "indexsim kernels/sparse_attn.cu"}, {"grid", b.t.kernels.front().grid},
                              {"smem_bytes", b.t.kernels.front().smem_bytes}, {"kernels", b.t.kernels.size()}}}};
  return std::move(b.t);
}

std::vector<MlaDecodeSegment> flashmla_schedule(const std::vector<uint64_t>& seqlens, uint32_t parts) {
  constexpr uint64_t kBlock = 64, kOverhead = 5;  // FlashMLA: page block 64, fixed_overhead_num_blocks 5
  uint64_t total = 0;
  for (uint64_t len : seqlens) total += ceil_div(len, kBlock) + kOverhead;
  const uint64_t payload = ceil_div(total, std::max<uint32_t>(parts, 1)) + kOverhead;
  std::vector<MlaDecodeSegment> out;
  size_t b = 0;
  uint64_t now = 0;  // first block of batch b not yet assigned
  for (uint32_t p = 0; p < parts && b < seqlens.size(); ++p) {
    uint64_t remain = payload;
    while (b < seqlens.size()) {
      const uint64_t blocks = ceil_div(seqlens[b], kBlock);
      if (remain >= blocks - now + kOverhead) {  // the rest of this batch fits: finish it
        out.push_back({p, uint32_t(b), now, blocks});
        remain -= blocks - now + kOverhead;
        ++b;
        now = 0;
      } else {  // take what the budget leaves (after the overhead) and go to the next part
        if (remain > kOverhead) {
          out.push_back({p, uint32_t(b), now, now + remain - kOverhead});
          now += remain - kOverhead;
        }
        break;
      }
    }
  }
  return out;
}

TraceData emulate_mla_decode(const MlaDecodeShape& sh, const LaunchLimits& limits) {
  if (sh.batch == 0 || sh.heads == 0 || sh.q_per_seq == 0 || sh.seqlen == 0)
    throw std::invalid_argument("mla decode: batch, heads, s_q and seqlen must be > 0");
  constexpr uint64_t kDk = 576, kDv = 512, kRowBytes = kDk * 2, kBlock = 64, kBlockM = 64;
  // FlashMLA's dense decode (csrc flash_fwd_mla_kernel.h, flash_api.cpp; docs/library-heuristics.md
  // §2a): 64 query rows (heads x s_q of the one KV head) per CTA, 256 threads, 64-token KV blocks;
  // num_sm_parts = sm_count / ceil(rows / 64) parts share the batches' blocks greedily.
  const uint64_t R = uint64_t(sh.heads) * sh.q_per_seq, m_blocks = ceil_div(R, kBlockM);
  const uint32_t parts = uint32_t(std::max<uint64_t>(1, limits.units / m_blocks));
  const uint64_t smem = kBlockM * kRowBytes * 3 + kBlockM * kBlock * 2 + 1024;  // Q, two K buffers, P, softmax state
  if (smem > limits.smem_per_cta_bytes)
    throw std::invalid_argument("mla_decode: FlashMLA's dense kernel needs " + std::to_string(smem) +
                                " B of shared memory per CTA, the device allows " + std::to_string(limits.smem_per_cta_bytes));
  Builder b;
  const uint32_t kv = b.tensor("kv_cache", TensorClass::kv_cache, -1, uint64_t(sh.batch) * sh.seqlen * kRowBytes);
  const uint32_t q = b.tensor("q", TensorClass::activations, -1, uint64_t(sh.batch) * R * kRowBytes);
  const uint32_t out = b.tensor("out", TensorClass::activations, -1, uint64_t(sh.batch) * R * kDv * 2);
  const std::vector<uint64_t> lens(sh.batch, sh.seqlen);
  const auto segs = flashmla_schedule(lens, parts);
  std::vector<uint32_t> splits(sh.batch, 0);
  for (const auto& g : segs) ++splits[g.batch];
  uint64_t partial_rows = 0;
  for (uint32_t n : splits) partial_rows += n > 1 ? n : 0;
  const uint32_t ws = b.tensor("o_accum", TensorClass::scratch, -1, std::max<uint64_t>(1, partial_rows * R * (kDv + 1) * 4));
  const KernelShape ks{256, uint32_t(smem), 128};
  // Grid (m blocks, KV heads = 1, parts): CTA (m, p) is p · m_blocks + m.
  const uint32_t id = b.kernel("flash_mla_decode", KernelKind::sparse_attn, -1, {m_blocks, 1, parts}, ks);
  std::vector<uint32_t> seen(sh.batch, 0);
  std::vector<uint64_t> first_partial(sh.batch, 0);
  for (uint64_t acc = 0, i = 0; i < sh.batch; ++i) {
    first_partial[i] = acc;
    acc += splits[i] > 1 ? splits[i] : 0;
  }
  for (const auto& g : segs) {
    const uint64_t rows_q = R;
    for (uint64_t m = 0; m < m_blocks; ++m) {
      const uint64_t cta = uint64_t(g.part) * m_blocks + m, rows = std::min(kBlockM, rows_q - m * kBlockM);
      b.strided(id, q, false, cta, 1, (uint64_t(g.batch) * R + m * kBlockM) * kRowBytes, 0, rows * kRowBytes, 1, 0);
      const uint64_t t0 = g.block_begin * kBlock, t1 = std::min<uint64_t>(sh.seqlen, g.block_end * kBlock);
      b.strided(id, kv, false, cta, 1, (uint64_t(g.batch) * sh.seqlen + t0) * kRowBytes, 0, (t1 - t0) * kRowBytes, 1, 0);
      if (splits[g.batch] > 1)
        b.strided(id, ws, true, cta, 1, ((first_partial[g.batch] + seen[g.batch]) * R + m * kBlockM) * (kDv + 1) * 4, 0,
                  rows * (kDv + 1) * 4, 1, 0);
      else
        b.strided(id, out, true, cta, 1, (uint64_t(g.batch) * R + m * kBlockM) * kDv * 2, 0, rows * kDv * 2, 1, 0);
    }
    ++seen[g.batch];
  }
  const double tokens = double(sh.batch) * double(sh.seqlen);
  b.k(id).flops[int(Precision::bf16)] = 2.0 * double(m_blocks * kBlockM) * tokens * double(kDk + kDv);
  b.k(id).flops[int(Precision::simt)] = 4.0 * double(R) * tokens;
  if (partial_rows > 0) {
    // Combine: one 128-thread CTA per (query row, batch) with more than one split (FlashMLA's first
    // combine kernel), reading the splits' FP32 partials and LSEs and writing the BF16 output.
    const uint32_t c = b.kernel("flash_mla_combine", KernelKind::sparse_attn, -1, {R, sh.batch, 1}, KernelShape{128, 0, 32});
    for (uint32_t bi = 0; bi < sh.batch; ++bi) {
      if (splits[bi] <= 1) continue;
      for (uint32_t s = 0; s < splits[bi]; ++s)
        b.strided(c, ws, false, uint64_t(bi) * R, R, (first_partial[bi] + s) * R * (kDv + 1) * 4, int64_t((kDv + 1) * 4),
                  (kDv + 1) * 4, 1, 0);
      b.strided(c, out, true, uint64_t(bi) * R, R, uint64_t(bi) * R * kDv * 2, int64_t(kDv * 2), kDv * 2, 1, 0);
    }
    b.k(c).flops[int(Precision::simt)] = 2.0 * double(partial_rows) * double(R) * kDv;
  }
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", "mla_decode"},
                  {"batch", sh.batch}, {"heads", sh.heads}, {"s_q", sh.q_per_seq}, {"seqlen", sh.seqlen},
                  {"launch", {{"library", "flashmla dense decode"}, {"grid", b.t.kernels.front().grid},
                              {"num_sm_parts", parts}, {"smem_bytes", smem}, {"kernels", b.t.kernels.size()}}}};
  return std::move(b.t);
}

TraceData emulate_gemm(uint64_t m, uint64_t n, uint64_t k, Precision precision, const LaunchLimits& limits) {
  if (m == 0 || n == 0 || k == 0) throw std::invalid_argument("gemm m, n and k must be > 0");
  // A benchmark of one precision on a GPU without it would measure another precision's kernel.
  if (!limits.native[size_t(precision)])
    throw std::invalid_argument(std::string("gemm dtype ") + to_string(precision) +
                                ": this GPU has no Tensor Core path at that precision (its tensor_flops_per_clk_per_sm is 0)");
  GemmProblem prob;
  prob.m = m;
  prob.n = n;
  prob.k = k;
  prob.precision = precision;
  const GemmLaunch g = plan_gemm(prob, limits);
  Builder b;
  const uint32_t bits = precision == Precision::simt ? 32 : precision_bits(precision);
  const uint32_t c_bits = bits >= 32 ? 32 : 16;
  GemmOperands o;
  o.a_tensor = b.tensor("gemm.A", TensorClass::activations, -1, bytes_of(m * k, bits));
  o.b_tensor = b.tensor("gemm.B", TensorClass::weights, -1, bytes_of(n * k, bits));
  o.c_tensor = b.tensor("gemm.C", TensorClass::activations, -1, bytes_of(m * n, c_bits));
  o.a_bits = o.b_bits = bits;
  o.c_bits = c_bits;
  const uint32_t id = b.kernel("gemm", KernelKind::gemm, -1, {ceil_div(n, g.block_n), ceil_div(m, g.block_m), 1},
                               gemm_kernel_shape(g));
  gemm_flops(b.k(id), g, k, precision);
  gemm_accesses(b, id, 0, m, n, k, gemm_tiling(g), o);
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", "gemm"},
                  {"m", m}, {"n", n}, {"k", k}, {"precision", to_string(precision)},
                  {"launch", {{"library", g.library}, {"block_m", g.block_m}, {"block_n", g.block_n},
                              {"block_k", g.block_k}, {"stages", g.stages}, {"multicast", g.multicast},
                              {"multicast_on", g.multicast_on_a ? "A" : "B"}, {"persistent_ctas", g.persistent_ctas},
                              {"smem_bytes", g.smem_bytes}}}};
  return std::move(b.t);
}

}  // namespace indexsim::trace
