// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/attention_kernels.hpp"

#include <algorithm>
#include <string>

#include "traces/generators/emulate.hpp"
#include "traces/kernel_geometry.hpp"

namespace indexsim::trace {

namespace detail {

namespace {
constexpr uint64_t kMqaSplit = 256, kMqaPage = 64, kMqaMathWg = 4, kMqaStages = 3;
}  // namespace

uint64_t paged_mqa_smem(const PagedMqaLogits& a) {
  const uint64_t T = a.queries, IH = a.heads;
  return kMqaStages * (T * IH * a.head_dim + T * IH * 4) + kMqaMathWg * kMqaStages * kMqaPage * (a.entry_dim + 4);
}

void paged_mqa_logits(Builder& b, const PagedMqaLogits& a, const LaunchLimits& lim) {
  const uint64_t B = a.batch, T = a.queries, eb = a.entry_bytes, cap = a.capacity, D = a.head_dim, IH = a.heads;
  const uint64_t e = a.entries, row4 = a.row4;
  const uint64_t sms = lim.units, per_seq = ceil_div(e, kMqaSplit), total = B * per_seq;
  const KernelShape shape{uint32_t(128 + 128 * kMqaMathWg), uint32_t(paged_mqa_smem(a)),
                          uint32_t((128 * 64 + 128 * kMqaMathWg * 104) / (128 + 128 * kMqaMathWg))};
  const uint32_t sc = b.kernel(a.name, KernelKind::indexer_score, a.layer, {sms, 1, 1}, shape, a.deps);
  const uint64_t q = total / sms, r = total % sms;
  for (uint64_t c = 0; c < sms; ++c) {
    uint64_t first = c * q + std::min(c, r);
    const uint64_t last = (c + 1) * q + std::min(c + 1, r);
    while (first < last) {  // one run per sequence the CTA's range crosses
      const uint64_t s = first / per_seq, lo = first % per_seq, hi = std::min(per_seq, lo + (last - first));
      const uint64_t t0 = lo * kMqaSplit, t1 = std::min(e, hi * kMqaSplit);
      b.strided(sc, a.q, false, c, 1, s * T * IH * D, 0, T * IH * D, 1, 0);  // the sequence's FP8 queries
      b.strided(sc, a.cache, false, c, 1, s * cap * eb + t0 * eb, 0, (t1 - t0) * eb, 1, 0);
      b.strided(sc, a.logits, true, c, 1, s * T * row4 + t0 * 4, 0, (t1 - t0) * 4, T, int64_t(row4));
      first += hi - lo;
    }
  }
}

RadixTopkKernels radix_topk(Builder& b, const RadixTopk& a) {
  namespace geo = geometry;
  const uint64_t rows = a.rows, n = a.entries, kt = a.kt, row4 = a.row4;
  const int L = a.layer;
  const uint64_t chunks = uint64_t(geo::topk_chunks(int64_t(n))), chunk_bytes = uint64_t(geo::kTopkChunk) * 4;
  const KernelShape row_cta{uint32_t(geo::kTopkThreads), 0, 32}, sort_cta{uint32_t(geo::kTopkSortThreads), 0, 32};
  // Workspace (topk_workspace_bytes): per row a state, the histogram, one tie count per chunk and
  // the winners (8 B: key and index).
  const uint64_t hist = uint64_t(geo::kTopkBins) * 4, eq = chunks * 4, win = kt * 8, state = 64;
  const uint64_t ws_row = state + hist + eq + win;
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
        b.strided(k, tensor, write, r * chunks, chunks - 1, base + r * row_stride, int64_t(col_stride), full_bytes, 1, 0);
        b.strided(k, tensor, write, r * chunks + chunks - 1, 1, base + r * row_stride + (chunks - 1) * col_stride, 0,
                  last_bytes, 1, 0);
      }
    } else {
      for (uint64_t c = 0; c < chunks; ++c)
        b.strided(k, tensor, write, c * rows, rows, base + c * col_stride, int64_t(row_stride),
                  c + 1 == chunks ? last_bytes : full_bytes, 1, 0);
    }
  };
  const uint64_t last_scores = n - (chunks - 1) * geo::kTopkChunk;
  // A chunk pass: its reads, and the instructions of each chunk's CTA (kernel_geometry.hpp).
  auto scan = [&](uint32_t k, double warp_insts_per_cta) {
    grid2d(k, a.logits, false, 0, row4, chunk_bytes, chunk_bytes, last_scores * 4);
    b.k(k).flops[int(Precision::simt)] = double(rows) * double(n) * 4.0;
    b.k(k).warp_instructions = double(rows) * double(chunks) * warp_insts_per_cta;
  };
  const uint32_t init = b.kernel(a.name_prefix + "topk_init", KernelKind::topk, L, {rows, 1, 1}, row_cta);
  b.strided(init, a.workspace, true, 0, rows, 0, int64_t(ws_row), state + hist, 1, 0);
  b.k(init).warp_instructions = double(rows) * geo::kTopkInitWarpInsts;
  for (int pass = 0; pass < geo::kTopkPasses; ++pass) {
    const uint64_t bins = uint64_t(geo::kTopkPassBins[pass]);
    const uint32_t h = b.kernel(a.name_prefix + "topk_hist" + std::to_string(pass), KernelKind::topk, L, {chunks, rows, 1}, row_cta);
    scan(h, geo::kTopkHistWarpInsts[pass]);
    // Each chunk adds its block histogram to its row's (global atomics on the bins).
    grid2d(h, a.workspace, true, o_hist, ws_row, 0, bins * 4, bins * 4);
    const uint32_t pk = b.kernel(a.name_prefix + "topk_pick" + std::to_string(pass), KernelKind::topk, L, {rows, 1, 1}, row_cta);
    b.strided(pk, a.workspace, false, 0, rows, o_hist, int64_t(ws_row), bins * 4, 1, 0);
    b.strided(pk, a.workspace, true, 0, rows, 0, int64_t(ws_row), state + bins * 4, 1, 0);
    b.k(pk).flops[int(Precision::simt)] = double(rows) * double(bins);
    b.k(pk).warp_instructions = double(rows) * geo::kTopkPickWarpInsts;
  }
  const uint32_t ce = b.kernel(a.name_prefix + "topk_count_eq", KernelKind::topk, L, {chunks, rows, 1}, row_cta);
  scan(ce, geo::kTopkCountEqWarpInsts);
  grid2d(ce, a.workspace, true, o_eq, ws_row, 4, 4, 4);
  const uint32_t co = b.kernel(a.name_prefix + "topk_collect", KernelKind::topk, L, {chunks, rows, 1}, row_cta);
  scan(co, geo::kTopkCollectWarpInsts);
  // Each chunk writes its share of the row's k winners.
  const uint64_t share = std::max<uint64_t>(8, ceil_div(kt, chunks) * 8);
  grid2d(co, a.workspace, true, o_win, ws_row, std::min(share, win), std::min(share, win), std::min(share, win));
  const uint32_t so = b.kernel(a.name_prefix + "topk_sort", KernelKind::topk, L, {rows, 1, 1}, sort_cta);
  b.strided(so, a.workspace, false, 0, rows, o_win, int64_t(ws_row), win, 1, 0);
  b.strided(so, a.indices, true, 0, rows, 0, int64_t(kt * 4), kt * 4, 1, 0);
  uint64_t len = 1;
  while (len < kt) len <<= 1;
  b.k(so).flops[int(Precision::simt)] = double(rows) * double(len) * 11 * 12 / 2;  // bitonic compare-exchanges
  b.k(so).warp_instructions = double(rows) * geo::topk_sort_warp_insts(int64_t(kt));
  return {so, rows * ws_row};
}

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
  // the dequantisation of every gathered latent value by every head block's CTA) on the CUDA cores,
  // between barriers: kernels/sparse_attn.cu dequantises a tile, then multiplies, so the two pipes
  // take turns.
  const double padded_heads = double(HB * geo::kAttnHeadsPerCta);
  b.k(id).flops[static_cast<int>(a.compute)] = 2.0 * padded_heads * (2.0 * a.d_latent + a.d_rope) * rows_total;
  b.k(id).flops[static_cast<int>(Precision::simt)] =
      4.0 * double(H) * rows_total +
      (fp8 ? lim.simt_flops_per_fp8_value * double(a.d_latent) * rows_total * double(HB) : 0.0);
  b.k(id).simt_overlaps_mma = false;
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

}  // namespace detail

using namespace detail;

namespace {
// The benchmarks' selected rows: uniform over the context (seeded), one selection per sequence.
std::vector<std::vector<uint32_t>> uniform_selection(const SparseMlaDecodeShape& sh) {
  std::vector<std::vector<uint32_t>> rows(sh.batch);
  TopkPicker picker;
  const TopkSelection uniform{0, 0, 1.0};
  for (uint32_t s = 0; s < sh.batch; ++s) {
    Rng rng(sub_seed(sh.seed, 0x5350u, s));
    rows[s] = picker.pick(sh.context, sh.topk, uniform, rng);
  }
  return rows;
}
}  // namespace

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
  const auto rows = uniform_selection(sh);
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

namespace {

// What differs between FlashMLA's dense BF16 decode and its sparse FP8 decode; the schedule, the
// grid, the split-KV workspace and the combine are the same.
struct FlashMlaKernel {
  const char* name;
  uint32_t batch, heads, q_per_seq;
  uint64_t kv_rows;    // rows a query token attends to: the sequence (dense) or its top-k (sparse)
  uint64_t row_bytes;  // bytes of one KV row in memory
  // Rows of batch b by position: the sequence's own rows (null) or its selected rows.
  const std::vector<std::vector<uint32_t>>* selected = nullptr;
  uint64_t context = 0;  // KV rows stored per sequence
  bool crossover = false;  // CTA pairs each load and dequantise half the rows and share them (DSM)
  uint32_t threads = 256;
  double simt_flops_per_value = 0;  // dequantisation of a loaded row's latent values (FP8 rows)
};

TraceData flashmla_decode(const FlashMlaKernel& f, const LaunchLimits& limits, nlohmann::json launch) {
  constexpr uint64_t kDk = geometry::kAttnDk, kDv = geometry::kAttnDv, kRowBytes = geometry::kKvBf16RowBytes;
  constexpr uint64_t kBlock = 64, kBlockM = 64;  // FlashMLA: 64-token KV blocks, 64 query rows a CTA
  // FlashMLA's decode (csrc flash_fwd_mla_kernel.h, flash_api.cpp; docs/library-heuristics.md §2a):
  // 64 query rows (heads x s_q of the one KV head) per CTA, 256 threads, 64-token KV blocks;
  // num_sm_parts = sm_count / ceil(rows / 64) parts share the batches' blocks greedily.
  const uint64_t R = uint64_t(f.heads) * f.q_per_seq, m_blocks = ceil_div(R, kBlockM);
  const uint32_t parts = uint32_t(std::max<uint64_t>(1, limits.units / m_blocks));
  const uint64_t smem = kBlockM * kRowBytes * 3 + kBlockM * kBlock * 2 + 1024;  // Q, two K buffers, P, softmax state
  if (smem > limits.smem_per_cta_bytes)
    throw std::invalid_argument(std::string(f.name) + ": FlashMLA's kernel needs " + std::to_string(smem) +
                                " B of shared memory per CTA, the device allows " + std::to_string(limits.smem_per_cta_bytes));
  // A pair shares rows only when both halves are heads of one query token.
  const bool pairs = f.crossover && f.heads % (2 * kBlockM) == 0;
  Builder b;
  const uint64_t stored = f.selected ? f.context : f.kv_rows;
  const uint32_t kv = b.tensor("kv_cache", TensorClass::kv_cache, -1, uint64_t(f.batch) * stored * f.row_bytes);
  const uint32_t q = b.tensor("q", TensorClass::activations, -1, uint64_t(f.batch) * R * kRowBytes);
  const uint32_t out = b.tensor("out", TensorClass::activations, -1, uint64_t(f.batch) * R * kDv * 2);
  const uint32_t idx = f.selected ? b.tensor("topk_indices", TensorClass::topk_indices, -1, uint64_t(f.batch) * f.kv_rows * 4)
                                  : 0;
  const std::vector<uint64_t> lens(f.batch, f.kv_rows);
  const auto segs = flashmla_schedule(lens, parts);
  std::vector<uint32_t> splits(f.batch, 0);
  for (const auto& g : segs) ++splits[g.batch];
  uint64_t partial_rows = 0;
  for (uint32_t n : splits) partial_rows += n > 1 ? n : 0;
  const uint32_t ws = b.tensor("o_accum", TensorClass::scratch, -1, std::max<uint64_t>(1, partial_rows * R * (kDv + 1) * 4));
  const KernelShape ks{f.threads, uint32_t(smem), 128};
  // Grid (m blocks, KV heads = 1, parts): CTA (m, p) is p · m_blocks + m; a pair is m = 2i, 2i + 1.
  // The sparse kernel's (heads / 64, s_q, parts) numbers its CTAs the same way.
  const std::array<uint64_t, 3> grid = f.selected ? std::array<uint64_t, 3>{ceil_div(f.heads, kBlockM), f.q_per_seq, parts}
                                                  : std::array<uint64_t, 3>{m_blocks, 1, parts};
  const uint32_t id = b.kernel(f.name, KernelKind::sparse_attn, -1, grid, ks);
  std::vector<uint32_t> seen(f.batch, 0);
  std::vector<uint64_t> first_partial(f.batch, 0);
  for (uint64_t acc = 0, i = 0; i < f.batch; ++i) {
    first_partial[i] = acc;
    acc += splits[i] > 1 ? splits[i] : 0;
  }
  double rows_attended = 0, rows_loaded = 0, softmax_rows = 0;  // over all CTAs
  for (const auto& g : segs) {
    const uint64_t t0 = g.block_begin * kBlock, t1 = std::min<uint64_t>(f.kv_rows, g.block_end * kBlock);
    for (uint64_t m = 0; m < m_blocks; ++m) {
      const uint64_t cta = uint64_t(g.part) * m_blocks + m, rows = std::min(kBlockM, R - m * kBlockM);
      b.strided(id, q, false, cta, 1, (uint64_t(g.batch) * R + m * kBlockM) * kRowBytes, 0, rows * kRowBytes, 1, 0);
      const uint64_t kv_base = uint64_t(g.batch) * stored * f.row_bytes;
      if (!f.selected) {
        b.strided(id, kv, false, cta, 1, kv_base + t0 * f.row_bytes, 0, (t1 - t0) * f.row_bytes, 1, 0);
        rows_loaded += double(t1 - t0);
      } else {
        b.strided(id, idx, false, cta, 1, (uint64_t(g.batch) * f.kv_rows + t0) * 4, 0, (t1 - t0) * 4, 1, 0);
        const auto& sel = (*f.selected)[g.batch];
        std::vector<uint32_t> mine;
        for (uint64_t j = t0; j < t1; ++j)
          if (!pairs || j % 2 == m % 2) mine.push_back(sel[j]);
        rows_loaded += double(mine.size());
        b.gather(id, kv, cta, 1, kv_base, uint32_t(f.row_bytes), f.row_bytes, std::move(mine));
      }
      rows_attended += double(t1 - t0);
      softmax_rows += double(rows) * double(t1 - t0);
      if (splits[g.batch] > 1)
        b.strided(id, ws, true, cta, 1, ((first_partial[g.batch] + seen[g.batch]) * R + m * kBlockM) * (kDv + 1) * 4, 0,
                  rows * (kDv + 1) * 4, 1, 0);
      else
        b.strided(id, out, true, cta, 1, (uint64_t(g.batch) * R + m * kBlockM) * kDv * 2, 0, rows * kDv * 2, 1, 0);
    }
    ++seen[g.batch];
  }
  // Every CTA multiplies its 64 rows against every row its range attends to (crossover halves the
  // loads and the dequantisation, not the MMA); softmax and dequantisation on the CUDA cores.
  b.k(id).flops[int(Precision::bf16)] = 2.0 * double(kBlockM) * rows_attended * double(kDk + kDv);
  b.k(id).flops[int(Precision::simt)] = 4.0 * softmax_rows + f.simt_flops_per_value * double(kDv) * rows_loaded;
  if (f.simt_flops_per_value > 0) {
    // The FP8 kernel is warp-specialised (docs/library-heuristics.md §2b): one producer warpgroup
    // gathers and dequantises while two multiply. Its deep dive finds it bound by dequantisation (50
    // cycles a token against 34 of MMA, F-dd2), and one warpgroup (a warp per scheduler) cannot
    // issue the conversion chain at the SM's throughput, so the pipes do not overlap as the maxima
    // would have it. The model adds them [U]: the measured 410 and 250 TFLOP/s (with and without
    // crossover) lie below even the sum (configs/validation/published.yaml).
    b.k(id).simt_overlaps_mma = false;
  }
  if (partial_rows > 0) {
    // Combine: one 128-thread CTA per (query row, batch) with more than one split (FlashMLA's first
    // combine kernel), reading the splits' FP32 partials and LSEs and writing the BF16 output.
    const uint32_t c = b.kernel("flash_mla_combine", KernelKind::sparse_attn, -1, {uint32_t(R), f.batch, 1}, KernelShape{128, 0, 32});
    for (uint32_t bi = 0; bi < f.batch; ++bi) {
      if (splits[bi] <= 1) continue;
      for (uint32_t s = 0; s < splits[bi]; ++s)
        b.strided(c, ws, false, uint64_t(bi) * R, R, (first_partial[bi] + s) * R * (kDv + 1) * 4, int64_t((kDv + 1) * 4),
                  (kDv + 1) * 4, 1, 0);
      b.strided(c, out, true, uint64_t(bi) * R, R, uint64_t(bi) * R * kDv * 2, int64_t(kDv * 2), kDv * 2, 1, 0);
    }
    b.k(c).flops[int(Precision::simt)] = 2.0 * double(partial_rows) * double(R) * kDv;
  }
  launch["grid"] = b.t.kernels.front().grid;
  launch["num_sm_parts"] = parts;
  launch["smem_bytes"] = smem;
  launch["kernels"] = b.t.kernels.size();
  b.t.metadata = {{"source", "emulated"}, {"generator", kGeneratorVersion}, {"workload", f.name},
                  {"batch", f.batch}, {"heads", f.heads}, {"s_q", f.q_per_seq}, {"launch", launch}};
  return std::move(b.t);
}

}  // namespace

TraceData emulate_mla_decode(const MlaDecodeShape& sh, const LaunchLimits& limits) {
  if (sh.batch == 0 || sh.heads == 0 || sh.q_per_seq == 0 || sh.seqlen == 0)
    throw std::invalid_argument("mla decode: batch, heads, s_q and seqlen must be > 0");
  FlashMlaKernel f{"flash_mla_decode", sh.batch, sh.heads, sh.q_per_seq, sh.seqlen, geometry::kKvBf16RowBytes};
  TraceData t = flashmla_decode(f, limits, {{"library", "flashmla dense decode"}});
  t.metadata["seqlen"] = sh.seqlen;
  return t;
}

TraceData emulate_flashmla_sparse_decode(const SparseMlaDecodeShape& sh, const LaunchLimits& limits, bool crossover) {
  if (sh.batch == 0 || sh.heads == 0 || sh.q_per_seq == 0 || sh.topk == 0 || sh.context < sh.topk)
    throw std::invalid_argument("flashmla sparse decode: batch, heads, s_q and topk must be > 0 and context >= topk");
  if (sh.kv_row_bytes != uint64_t(geometry::kKvFp8RowBytes))
    throw std::invalid_argument("flashmla sparse decode: FlashMLA's sparse decode reads FP8 rows (kv: fp8) only");
  // The project's kernel's rows (emulate_sparse_mla_decode), so the two read the same ones.
  const auto rows = uniform_selection(sh);
  if (sh.heads % 64) throw std::invalid_argument("flashmla sparse decode: heads must be a multiple of 64 (FlashMLA: 64 or 128)");
  FlashMlaKernel f{"flash_mla_sparse_decode", sh.batch, sh.heads, sh.q_per_seq, sh.topk, sh.kv_row_bytes};
  f.selected = &rows;
  f.threads = 384;  // two MMA warpgroups and a producer (library-heuristics.md §2b)
  f.context = sh.context;
  f.crossover = crossover;
  f.simt_flops_per_value = limits.simt_flops_per_fp8_value;
  TraceData t = flashmla_decode(f, limits, {{"library", "flashmla sparse decode (FP8 KV)"}, {"crossover", crossover}});
  t.metadata["topk"] = sh.topk;
  t.metadata["context"] = sh.context;
  return t;
}

}  // namespace indexsim::trace
