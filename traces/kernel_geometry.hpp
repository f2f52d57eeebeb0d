// SPDX-License-Identifier: Apache-2.0
// Launch geometry of the project's own CUDA kernels (kernels/topk.cu, kernels/sparse_attn.cu): the
// block sizes, tiles, shared memory and split counts their plans launch with, in one place that
// both the CUDA plans and the emulated traces (traces/generators/emulate.cpp) read. A captured
// trace and an emulated one of the same shape therefore describe the same kernels; the test
// tests/cpp/test_kernel_geometry.cpp checks the emulated records against these figures.
// Plain C++ (no CUDA), header-only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace indexsim::trace::geometry {

// --- top-k (kernels/topk.cu): radix select over every CTA of a row -------------------------------
// Chunks of 256 threads × 16 scores; three digit passes (11, 11, 10 bits of the order-preserving
// key) of histogram (all chunks) + pick (one CTA per row), then a count of the threshold ties, an
// ordered collection of the winners (all chunks), and a bitonic sort of the k winners (one CTA).
constexpr int kTopkThreads = 256;
constexpr int kTopkPerThread = 16;
constexpr int kTopkChunk = kTopkThreads * kTopkPerThread;  // scores per CTA per row
constexpr int kTopkBins = 2048;
constexpr int kTopkMaxK = 4096;
constexpr int kTopkSortThreads = 1024;
constexpr int kTopkPasses = 3;
constexpr int kTopkPassBins[kTopkPasses] = {2048, 2048, 1024};
inline int64_t topk_chunks(int64_t n) { return std::max<int64_t>(1, (n + kTopkChunk - 1) / kTopkChunk); }

// --- sparse MLA decode (kernels/sparse_attn.cu), FlashMLA-sparse-like ---------------------------
constexpr int kAttnDk = 576, kAttnDv = 512;
constexpr int kKvFp8RowBytes = 656, kKvBf16RowBytes = 1152;
constexpr int kAttnHeadsPerCta = 64;
constexpr int kAttnTileRows = 32;   // gathered rows per tile (two cp.async stages)
constexpr int kAttnThreads = 256;
constexpr int kAttnCombineThreads = 128;
// Shared memory: Q (64 rows, 16 B padded), two K stages, scores, probabilities, softmax state.
constexpr int kAttnPitch = kKvBf16RowBytes + 16;
constexpr size_t kAttnQsBytes = size_t(kAttnHeadsPerCta) * kAttnPitch;
constexpr size_t kAttnKsBytes = size_t(2) * kAttnTileRows * kAttnPitch;
constexpr size_t kAttnSsBytes = size_t(kAttnHeadsPerCta) * (kAttnTileRows + 1) * 4;
constexpr size_t kAttnPsBytes = size_t(kAttnHeadsPerCta) * (kAttnTileRows + 8) * 2;
constexpr size_t kAttnSmemBf16 =
    kAttnQsBytes + kAttnKsBytes + kAttnSsBytes + kAttnPsBytes + 3 * kAttnHeadsPerCta * 4 + 2 * kAttnTileRows * 4;
// FP8 rows arrive raw (656 B) in two stages and are dequantised into one BF16 tile.
constexpr size_t kAttnSmemFp8 = kAttnSmemBf16 - kAttnKsBytes / 2 + 2 * size_t(kAttnTileRows) * kKvFp8RowBytes;

inline int attn_ceil_div(int a, int b) { return (a + b - 1) / b; }
// Splits of each query's selected rows: enough CTAs to cover the SMs once (head blocks × queries ×
// splits ≈ sm_count), each split a whole number of tiles; `forced` > 0 fixes the count.
inline int sparse_attn_splits(int topk, int heads, int nq, int sm_count, int forced = 0) {
  const int max_splits = std::max(1, attn_ceil_div(topk, kAttnTileRows));
  if (forced > 0) return std::min(forced, max_splits);
  const int blocks = attn_ceil_div(heads, kAttnHeadsPerCta) * nq;
  const int want = std::clamp(attn_ceil_div(sm_count, blocks), 1, max_splits);
  const int per = attn_ceil_div(attn_ceil_div(topk, want), kAttnTileRows) * kAttnTileRows;
  return attn_ceil_div(topk, per);
}
// Rows of one split (a multiple of the tile; the last split takes what is left).
inline int sparse_attn_rows_per_split(int topk, int splits) {
  return attn_ceil_div(attn_ceil_div(topk, splits), kAttnTileRows) * kAttnTileRows;
}

// --- Warp instructions per CTA ----------------------------------------------------------------
// What each CTA of these kernels issues, as Nsight Compute counted it on an H200 (warp-level
// instructions executed, smsp__inst_executed.sum / CTAs; kernels as of commit a64b6bc; the counts
// are in traces/captured/ncu/). A property of the code and the shape, not of the GPU's speed: the
// SM model times a CTA's instruction issue from it (KernelRecord::warp_instructions).
constexpr double kTopkInitWarpInsts = 570;
// Per chunk of 4096 scores. A pass only histograms the scores that share the digits picked so far,
// so pass 1 varies with the data (4,479-5,353 over seven shapes): its median.
constexpr double kTopkHistWarpInsts[kTopkPasses] = {5420, 4960, 4034};
constexpr double kTopkPickWarpInsts = 2151;
constexpr double kTopkCountEqWarpInsts = 2984;
constexpr double kTopkCollectWarpInsts = 8530;  // median of 6,059-8,921: the winners a chunk holds vary
// The bitonic sort of the k winners padded to m = 2^ceil(log2 k) is m/2 · log2 m · (log2 m + 1) / 2
// compare-exchanges; 157,472 warp instructions at k = 2048 (the only k measured) set the cost of one.
inline double topk_sort_warp_insts(int64_t k) {
  int64_t m = 1, lg = 0;
  while (m < k) m <<= 1, ++lg;
  const double exchanges = double(m) / 2 * double(lg) * double(lg + 1) / 2;
  return 157472.0 / (1024.0 * 11 * 12 / 2) * exchanges;
}
// Sparse attention: a base (Q load, softmax state, output) and each 32-row tile (BF16 rows: from
// 1- and 64-tile CTAs, checked at 32 tiles within 0.1 %; FP8 rows add the dequantisation: one
// 4-tile point, base assumed the same). The combine: a base and each split (2, 16 and 64 splits).
inline double sparse_attn_warp_insts(int tiles, bool fp8_rows) { return 7326.0 + (fp8_rows ? 12622.0 : 10512.0) * tiles; }
inline double sparse_attn_combine_warp_insts(int splits) { return 560.0 + 163.5 * splits; }
// The FP8 indexer (kernels/indexer.cu, 128 dimensions): 946 + 4,908 per 64-key tile at 64 heads
// (1, 7 and 15 tiles a CTA); 4,303 for one tile at 32 heads (that tile's share taken as 4,303 - 946).
// Other shapes were not measured: 0 (not known).
inline double indexer_fp8_warp_insts(int heads, int dim, int tiles) {
  if (dim != 128 || (heads != 64 && heads != 32)) return 0;
  return 946.0 + (heads == 64 ? 4908.0 : 3357.0) * tiles;
}

// CTA numbering of the emulated split-KV kernel. CUDA numbers CTA (x = head block · splits + split,
// y = query) as y · gridDim.x + x: the head blocks and splits of one query run side by side and
// share its rows in L2. The emulation keeps that order (one record per CTA) when the grid has more
// than one CTA per query and at most kAttnCtaOrderLimit of them; bigger grids (a prefill chunk of
// thousands of queries, one CTA each) number (head block, split) outermost so that one record
// serves a whole query tile.
constexpr uint64_t kAttnCtaOrderLimit = 65536;
inline bool sparse_attn_cuda_order(uint64_t queries, uint64_t head_blocks, uint64_t splits) {
  return head_blocks * splits > 1 && queries * head_blocks * splits <= kAttnCtaOrderLimit;
}
inline uint64_t sparse_attn_cta(uint64_t q, uint64_t h, uint64_t sp, uint64_t queries, uint64_t head_blocks,
                                uint64_t splits) {
  return sparse_attn_cuda_order(queries, head_blocks, splits) ? (q * head_blocks + h) * splits + sp
                                                              : (h * splits + sp) * queries + q;
}
inline uint64_t sparse_attn_head_block(uint64_t cta, uint64_t queries, uint64_t head_blocks, uint64_t splits) {
  return sparse_attn_cuda_order(queries, head_blocks, splits) ? (cta % (head_blocks * splits)) / splits
                                                              : cta / (splits * queries);
}

}  // namespace indexsim::trace::geometry
