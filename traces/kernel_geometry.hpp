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
