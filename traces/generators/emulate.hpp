// SPDX-License-Identifier: Apache-2.0
// Emulated traces: the kernels, launch geometry and per-CTA access patterns that one inference step
// of a sparse-attention model runs on ONE GPU, generated on the CPU from the model shape.
//
// The kernels follow how the real ones tile their work: GEMMs in output tiles (CUTLASS/DeepGEMM),
// indexer scoring in 64-token cache tiles (DeepGEMM paged MQA logits), sparse attention over
// query-head groups gathering the top-k KV rows (FlashMLA sparse decode). A million-token scan is
// one strided record; a top-k gather is one record with its rows, so traces stay small.
#pragma once

#include <cstdint>
#include <string>

#include "traces/generators/model_shape.hpp"
#include "traces/generators/step.hpp"
#include "traces/launch_limits.hpp"
#include "traces/trace_data.hpp"

namespace indexsim::trace {

constexpr const char* kGeneratorVersion = "emulate-2";  // 2: library launch shapes (plan_gemm, split-KV attention, radix top-k)

// Launch shapes follow `limits` (the device the step runs on; the default is an H100/H200-class GPU).
TraceData emulate_step(const ModelShape& shape, const StepParams& params, const LaunchLimits& limits = {});

// Expected number of this GPU's routed experts that receive at least one of `tokens` tokens when
// each token picks `active` of `total` experts uniformly: local · (1 − (1 − active/total)^tokens),
// rounded, at least 1. Exposed so that tests and the simulator share the same arithmetic.
uint32_t experts_touched(uint32_t local, uint32_t active, uint32_t total, uint64_t tokens);

// A device-to-device copy (grid-stride loop: each CTA moves threads·vector_bytes per iteration),
// `bytes` an array: read from `sources` arrays and, unless read-only, written to one.
struct CopyShape {
  uint32_t ctas = 0;            // 0: one CTA per threads·vector_bytes chunk, at most 65535
  uint32_t threads = 256;
  uint32_t vector_bytes = 16;   // one 128-bit load and store per thread per iteration
  bool write = true;            // false: a read-only stream (the loads alone, as a reduction reads)
  uint32_t sources = 1;         // arrays read, element by element alike (2: STREAM's Add and Dot; 0: a write-only fill)
};
TraceData emulate_copy(uint64_t bytes, const CopyShape& shape = {});

// C[m×n] = A[m×k] · B[n×k]ᵀ with both operands K-major (as Hopper FP8 GEMMs require), launched
// as plan_gemm (traces/generators/launch.hpp) picks for this device: every CTA streams its A
// row-panel and B column-panel through the k-loop (re-read from L2 by the other tiles that share
// them, or shared by a multicast pair) and writes its C tile. One CTA per output tile: a persistent
// kernel's CTAs walk the same tiles one SM at a time (one CTA fits an SM), so the SMs see the same
// sequence of tiles.
TraceData emulate_gemm(uint64_t m, uint64_t n, uint64_t k, Precision precision, const LaunchLimits& limits);

// Sparse MLA decode (FlashMLA's benchmark shape: batch, query heads, s_q queries per sequence, topk
// selected rows of a `context`-token FP8 or BF16 KV cache, d_qk 576, d_v 512) as the project's
// split-KV kernel and its combine run it; rows picked uniformly (seeded).
struct SparseMlaDecodeShape {
  uint32_t batch = 1, heads = 128, q_per_seq = 1, topk = 2048;
  uint64_t context = 65536;
  uint32_t kv_row_bytes = 656;   // FlashMLA FP8 layout; 1152 for BF16 rows
  uint64_t seed = 1;
};
TraceData emulate_sparse_mla_decode(const SparseMlaDecodeShape& shape, const LaunchLimits& limits);

// Dense MLA decode with BF16 KV (d_qk 576, d_v 512, one KV head) as FlashMLA's first kernel runs it:
// its split-KV scheduler (flashmla_schedule) hands each of num_sm_parts CTAs a run of 64-token
// blocks across the batches; batches split across parts are merged by a combine kernel.
struct MlaDecodeShape {
  uint32_t batch = 1, heads = 128, q_per_seq = 1;
  uint64_t seqlen = 4096;
};
TraceData emulate_mla_decode(const MlaDecodeShape& shape, const LaunchLimits& limits);

// FlashMLA's sparse decode with FP8 KV (DeepSeek-V3.2; its deep dive F-dd2): the dense kernel's
// schedule over each sequence's top-k rows, gathered; each row's 512 E4M3 values are dequantised to
// BF16 on the CUDA cores before the BF16 MMAs. With `crossover` the two CTAs of a cluster (the two
// 64-head halves of one query token) each load and dequantise half the rows and exchange them
// through distributed shared memory (not simulated: SM to SM, no memory traffic).
TraceData emulate_flashmla_sparse_decode(const SparseMlaDecodeShape& shape, const LaunchLimits& limits, bool crossover = true);

// FlashMLA's get_mla_metadata: every batch costs its 64-token blocks plus a fixed overhead of 5;
// parts take ceil(total / parts) + 5 each, greedily, splitting a batch where a part's budget ends.
struct MlaDecodeSegment {
  uint32_t part = 0, batch = 0;
  uint64_t block_begin = 0, block_end = 0;  // [begin, end) 64-token blocks of that batch
};
std::vector<MlaDecodeSegment> flashmla_schedule(const std::vector<uint64_t>& seqlens, uint32_t parts);

}  // namespace indexsim::trace
