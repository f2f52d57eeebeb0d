// SPDX-License-Identifier: Apache-2.0
// The emulated attention-path kernels launch as the project's CUDA kernels do for the same shape:
// grid, block, shared memory and bytes per CTA equal what kernels/topk.cu (plan_topk) and
// kernels/sparse_attn.cu (plan_sparse_attn) compute from traces/kernel_geometry.hpp, which those
// plans include (their static_asserts pin the shared-memory layout to it). So a trace captured on a
// GPU and an emulated one of one shape describe the same launches.
#include <gtest/gtest.h>

#include <map>

#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/kernel_geometry.hpp"

using namespace indexsim::trace;
namespace geo = indexsim::trace::geometry;
using indexsim::test::workload_file;

namespace {

struct Launch {
  const KernelRecord* k = nullptr;
  std::map<uint64_t, uint64_t> bytes_read;  // CTA -> bytes read
};

// The kernels of `layer` by name suffix ("topk_hist0", "sparse_attn", ...) with their per-CTA reads.
std::map<std::string, Launch> layer_kernels(const TraceData& t, int layer) {
  std::map<std::string, Launch> out;
  const std::string prefix = "L" + std::to_string(layer) + ".";
  for (const auto& k : t.kernels)
    if (k.layer == layer && k.name.rfind(prefix, 0) == 0) out[k.name.substr(prefix.size())].k = &k;
  for (const auto& a : t.accesses) {
    const auto& k = t.kernels[a.kernel];
    if (k.layer != layer || a.write) continue;
    auto it = out.find(k.name.substr(prefix.size()));
    if (it == out.end()) continue;
    for (uint64_t c = a.cta_first; c < a.cta_first + a.cta_count; ++c) it->second.bytes_read[c] += a.bytes_per_cta();
  }
  return out;
}

// One DeepSeek-V3.2 decode step (batch 1, one query) at `context` on an H200-class device.
TraceData deepseek_decode(const ModelShape& m, uint64_t context) {
  StepParams p;
  p.phase = Phase::decode;
  p.context = context;
  p.batch = 1;
  p.queries = 1;
  return emulate_step(m, p, indexsim::test::hopper_limits());
}

}  // namespace

// DeepSeek-V3.2 decode at 1M tokens, batch 1, one query, on an H200-class device (132 SMs):
// top-k over n = 1M logits: chunks = ceil(n / 4096) = 256 CTAs of 256 threads per scan kernel, each
// reading its 4096 scores (16 KiB); one CTA per row for init, pick and sort (1024 threads).
TEST(KernelGeometry, TopkMatchesThePlanOfKernelsTopk) {
  const ModelShape m = load_model_shape_file(workload_file("deepseek-v3.2"));
  const TraceData t = deepseek_decode(m, 1 << 20);
  const auto ks = layer_kernels(t, 0);
  const uint64_t n = m.indexer_entries(1 << 20), chunks = uint64_t(geo::topk_chunks(int64_t(n)));
  ASSERT_EQ(chunks, 256u);
  for (const char* scan : {"topk_hist0", "topk_hist1", "topk_hist2", "topk_count_eq", "topk_collect"}) {
    SCOPED_TRACE(scan);
    const Launch& l = ks.at(scan);
    EXPECT_EQ(l.k->grid, (std::array<uint32_t, 3>{uint32_t(chunks), 1, 1}));
    EXPECT_EQ(l.k->block[0], uint32_t(geo::kTopkThreads));
    EXPECT_EQ(l.k->smem_bytes, 0u);
    for (uint64_t c = 0; c + 1 < chunks; ++c) ASSERT_EQ(l.bytes_read.at(c), uint64_t(geo::kTopkChunk) * 4) << c;
    EXPECT_EQ(l.bytes_read.at(chunks - 1), (n - (chunks - 1) * geo::kTopkChunk) * 4);
  }
  for (const char* row : {"topk_init", "topk_pick0", "topk_pick1", "topk_pick2"}) {
    EXPECT_EQ(ks.at(row).k->grid, (std::array<uint32_t, 3>{1, 1, 1})) << row;
    EXPECT_EQ(ks.at(row).k->block[0], uint32_t(geo::kTopkThreads)) << row;
  }
  EXPECT_EQ(ks.at("topk_sort").k->block[0], uint32_t(geo::kTopkSortThreads));
}

// Sparse attention: splits = sparse_attn_splits(topk, heads, queries, 132) (enough CTAs to cover the
// SMs once, each split a multiple of 32 rows); grid (head blocks x splits, queries), 256 threads, the
// FP8 layout's shared memory; a CTA gathers its split's rows (656 B each), reads its indices
// (4 B each) and its query's 64 heads of Q (576 BF16 values each); the combine runs one 128-thread
// CTA per (head, query).
TEST(KernelGeometry, SparseAttentionMatchesThePlanOfKernelsSparseAttn) {
  const ModelShape m = load_model_shape_file(workload_file("deepseek-v3.2"));
  const TraceData t = deepseek_decode(m, 1 << 16);
  const LaunchLimits h200;
  const auto ks = layer_kernels(t, 0);
  const int heads = int(m.local_heads()), topk = int(m.indexer.topk);
  ASSERT_EQ(m.mla.kv_bytes_per_token, uint32_t(geo::kKvFp8RowBytes));
  const int splits = geo::sparse_attn_splits(topk, heads, 1, int(h200.units));
  ASSERT_GT(splits, 1);
  const int per = geo::sparse_attn_rows_per_split(topk, splits);
  const Launch& a = ks.at("sparse_attn");
  const int hb = (heads + geo::kAttnHeadsPerCta - 1) / geo::kAttnHeadsPerCta;
  EXPECT_EQ(a.k->grid, (std::array<uint32_t, 3>{uint32_t(hb * splits), 1, 1}));
  EXPECT_EQ(a.k->block[0], uint32_t(geo::kAttnThreads));
  EXPECT_EQ(a.k->smem_bytes, uint32_t(geo::kAttnSmemFp8));
  const uint64_t q_bytes = uint64_t(std::min(heads, geo::kAttnHeadsPerCta)) * geo::kAttnDk * 2;
  for (int s = 0; s < splits; ++s) {
    const uint64_t rows = uint64_t(std::min(per, topk - s * per));
    const uint64_t idx = std::min<uint64_t>((topk + splits - 1) / splits, uint64_t(topk - std::min(topk, s * ((topk + splits - 1) / splits))));
    EXPECT_EQ(a.bytes_read.at(uint64_t(s)), rows * geo::kKvFp8RowBytes + idx * 4 + q_bytes) << "split " << s;
  }
  const Launch& c = ks.at("sparse_attn_combine");
  EXPECT_EQ(c.k->grid, (std::array<uint32_t, 3>{uint32_t(heads), 1, 1}));
  EXPECT_EQ(c.k->block[0], uint32_t(geo::kAttnCombineThreads));
  // The combine reads every split's FP32 partial row (512 values) and its LSE.
  EXPECT_EQ(c.bytes_read.at(0), uint64_t(splits) * (geo::kAttnDv * 4 + 4));
}

// FlashMLA's sparse decode benchmark shape (batch 128, 128 heads, s_q 2, topk 2048): 2 head blocks x
// 256 queries = 512 CTAs already cover 132 SMs, so one split and no combine; every query gathers its
// sequence's 2048 rows once per head block; Tensor Core FLOPs = 2 · 256 queries · 128 heads · 2048
// rows · (576 + 512), FlashMLA's own count.
TEST(KernelGeometry, SparseMlaDecodeBenchmarkShape) {
  SparseMlaDecodeShape sh;
  sh.batch = 128, sh.heads = 128, sh.q_per_seq = 2, sh.topk = 2048, sh.context = 65536;
  const TraceData t = emulate_sparse_mla_decode(sh, LaunchLimits{});
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].grid, (std::array<uint32_t, 3>{2, 256, 1}));
  EXPECT_DOUBLE_EQ(t.kernels[0].flops[int(Precision::bf16)], 2.0 * 256 * 128 * 2048 * (576 + 512));
  uint64_t gathered = 0;
  for (const auto& a : t.accesses)
    if (a.kind == AccessRecord::Kind::gather) gathered += a.bytes_per_cta() * a.cta_count;
  EXPECT_EQ(gathered, uint64_t(2) * 256 * 2048 * 656);
}

// FP8 rows are dequantised by every head block's CTA between barriers: SIMT FLOPs = softmax
// 4 · heads · rows + simt_flops_per_fp8_value · 512 latent values · rows · head blocks, and the
// kernel alternates its pipes. BF16 rows have no dequantisation.
TEST(KernelGeometry, SparseMlaDecodeChargesTheDequantisationOfEveryGatheredFp8Row) {
  SparseMlaDecodeShape sh;
  sh.batch = 128, sh.heads = 128, sh.q_per_seq = 2, sh.topk = 2048, sh.context = 65536;
  LaunchLimits lim;
  lim.simt_flops_per_fp8_value = 25.0;
  const TraceData t = emulate_sparse_mla_decode(sh, lim);
  const double rows = 256.0 * 2048;  // queries x selected rows
  EXPECT_DOUBLE_EQ(t.kernels[0].flops[int(Precision::simt)], 4.0 * 128 * rows + 25.0 * 512 * rows * 2);
  EXPECT_FALSE(t.kernels[0].simt_overlaps_mma);
  sh.kv_row_bytes = 1152;
  const TraceData bf = emulate_sparse_mla_decode(sh, lim);
  EXPECT_DOUBLE_EQ(bf.kernels[0].flops[int(Precision::simt)], 4.0 * 128 * rows);
}

// FlashMLA's sparse FP8 decode on the benchmark shape: the two CTAs of a pair (heads 0-63 and
// 64-127 of one query token) each gather half of the token's selected rows (crossover), so the
// gathered bytes and the dequantisation halve while the MMA FLOPs, 2 · 256 · 128 · 2048 · (576 +
// 512), do not. Without crossover every CTA gathers every row. BF16 rows are refused.
TEST(KernelGeometry, FlashMlaSparseDecodeCrossoverHalvesLoadsAndDequantisation) {
  SparseMlaDecodeShape sh;
  sh.batch = 128, sh.heads = 128, sh.q_per_seq = 2, sh.topk = 2048, sh.context = 65536;
  LaunchLimits lim;
  lim.simt_flops_per_fp8_value = 25.0;
  auto gathered = [](const TraceData& t) {
    uint64_t g = 0;
    for (const auto& a : t.accesses)
      if (a.kind == AccessRecord::Kind::gather) g += a.bytes_per_cta() * a.cta_count;
    return g;
  };
  const TraceData with = emulate_flashmla_sparse_decode(sh, lim, true);
  const TraceData without = emulate_flashmla_sparse_decode(sh, lim, false);
  const double mma = 2.0 * 256 * 128 * 2048 * (576 + 512);
  EXPECT_DOUBLE_EQ(with.kernels[0].flops[int(Precision::bf16)], mma);
  EXPECT_DOUBLE_EQ(without.kernels[0].flops[int(Precision::bf16)], mma);
  const double softmax = 4.0 * 256 * 128 * 2048;
  EXPECT_DOUBLE_EQ(without.kernels[0].flops[int(Precision::simt)], softmax + 25.0 * 512 * (4.0 * 128 * 2048));
  EXPECT_DOUBLE_EQ(with.kernels[0].flops[int(Precision::simt)], softmax + 25.0 * 512 * (2.0 * 128 * 2048));
  // FlashMLA's grid: (heads / 64, s_q, num_sm_parts = 132 / 4).
  EXPECT_EQ(without.kernels[0].grid, (std::array<uint32_t, 3>{2, 2, 33}));
  EXPECT_EQ(gathered(without), uint64_t(4) * 128 * 2048 * 656);
  EXPECT_EQ(gathered(with), uint64_t(2) * 128 * 2048 * 656);
  EXPECT_FALSE(with.kernels[0].simt_overlaps_mma);
  sh.kv_row_bytes = 1152;
  EXPECT_THROW(emulate_flashmla_sparse_decode(sh, lim, true), std::invalid_argument);
}

// FlashMLA's get_mla_metadata: total = Σ (ceil(len / 64) + 5) blocks, each part a budget of
// ceil(total / parts) + 5, filled greedily. Three batches of 640 tokens (10 blocks) on 2 parts:
// total 45, budget 28: part 0 takes batch 0 (15), then 8 of batch 1's blocks (28 - 15 - 5);
// part 1 the other 2 blocks of batch 1 and all of batch 2.
TEST(KernelGeometry, FlashMlaScheduleSplitsBatchesWhereABudgetEnds) {
  const auto segs = flashmla_schedule({640, 640, 640}, 2);
  ASSERT_EQ(segs.size(), 4u);
  EXPECT_EQ(segs[0].part, 0u);
  EXPECT_EQ(segs[0].block_end, 10u);
  EXPECT_EQ(segs[1].batch, 1u);
  EXPECT_EQ(segs[1].block_end, 8u);
  EXPECT_EQ(segs[2].part, 1u);
  EXPECT_EQ(segs[2].block_begin, 8u);
  EXPECT_EQ(segs[2].block_end, 10u);
  EXPECT_EQ(segs[3].batch, 2u);
  // Every block of every batch is assigned exactly once.
  uint64_t blocks = 0;
  for (const auto& g : segs) blocks += g.block_end - g.block_begin;
  EXPECT_EQ(blocks, 30u);
  // The dense decode reads the whole BF16 cache once: batch · seqlen · 1152 B of KV.
  MlaDecodeShape sh;
  sh.batch = 3, sh.heads = 16, sh.q_per_seq = 1, sh.seqlen = 640;
  LaunchLimits two;
  two.units = 2;
  const TraceData t = emulate_mla_decode(sh, two);
  uint64_t kv = 0;
  for (const auto& a : t.accesses)
    if (t.tensors[a.tensor].cls == TensorClass::kv_cache) kv += a.bytes_per_cta() * a.cta_count;
  EXPECT_EQ(kv, 3u * 640 * 1152);
  EXPECT_EQ(t.kernels.size(), 2u);  // batch 1 is split: a combine follows
}
