// SPDX-License-Identifier: Apache-2.0
// Emulated traces: for every shipped workload the totals of the generated step match the model's
// arithmetic (each test states its formula), the generator is deterministic for a seed, and the
// copy and GEMM microkernels move and compute what they should.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "tests/cpp/test_trace_util.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/generators/launch.hpp"
#include "traces/kernel_geometry.hpp"

using namespace indexsim::trace;
using indexsim::test::file_bytes;
using indexsim::test::shipped_workloads;
using indexsim::test::temp_path;
using indexsim::test::workload_file;

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

struct Step {
  ModelShape m;
  StepParams p;
  TraceData t;
  Summary s;
};
Step make(const std::string& w, StepParams p) {
  Step st{load_model_shape_file(workload_file(w)), p, {}, {}};
  st.t = emulate_step(st.m, p, indexsim::test::hopper_limits());
  st.s = summarize(st.t);
  return st;
}
StepParams decode(uint64_t context, uint32_t batch, uint32_t queries) {
  StepParams p;
  p.phase = Phase::decode;
  p.context = context;
  p.batch = batch;
  p.queries = queries;
  p.seed = 7;
  return p;
}
double flops(const Summary& s, const std::string& kind, Precision p) {
  return s.by_kind.count(kind) ? s.by_kind.at(kind).flops[static_cast<int>(p)] : 0.0;
}
uint64_t read_of(const Summary& s, const std::string& kind) {
  return s.by_kind.count(kind) ? s.by_kind.at(kind).bytes_read : 0;
}
uint64_t written_of(const Summary& s, const std::string& kind) {
  return s.by_kind.count(kind) ? s.by_kind.at(kind).bytes_written : 0;
}
// A context that is not a multiple of the 64-token tile nor of the 4-token pool, so partial tiles
// and incomplete pools are exercised.
constexpr uint64_t kContext = 100003;
}  // namespace

// Indexer-cache bytes read per decode step = layers running the indexer × stored entries(context)
// × bytes per entry × batch, entries = context / pool + context % pool (context without pooling).
// With at most q_tile queries, one pass over the cache serves all of a sequence's queries. Decode on
// Hopper runs DeepGEMM's paged MQA logits: one persistent CTA per SM (132), the 256-token splits of
// all sequences shared out evenly.
TEST(TraceEmulate, IndexerScanReadsTheWholeCacheOncePerSequenceAndLayer) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const Step st = make(w, decode(kContext, 3, 2));
    const uint64_t entries = kContext / st.m.indexer.pool_tokens + kContext % st.m.indexer.pool_tokens;
    const uint64_t layers = st.m.count_indexer_layers();
    const uint64_t cache = layers * entries * st.m.indexer.bytes_per_entry() * 3;
    EXPECT_EQ(st.s.by_class.at("indexer_cache").bytes_read - read_of(st.s, "index_append"), cache);
    EXPECT_EQ(st.s.by_kind.at("indexer_score").ctas, layers * LaunchLimits{}.units);
  }
}

// Indexer FLOPs = layers running the indexer × batch × Σ_t 2 · index_heads · index_dim · entries(n_t),
// n_t = context − queries + t + 1 (causal: each new token sees itself and what precedes it), in FP8.
TEST(TraceEmulate, IndexerFlopsAreTwoHeadsDimPerVisibleEntry) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const Step st = make(w, decode(kContext, 2, 3));
    double want = 0;
    for (uint64_t t = 0; t < 3; ++t) want += 2.0 * st.m.local_index_heads() * st.m.indexer.head_dim *
                                             double(st.m.indexer_entries(kContext - 3 + t + 1));
    want *= st.m.count_indexer_layers() * 2;
    EXPECT_DOUBLE_EQ(flops(st.s, "indexer_score", Precision::fp8), want);
  }
}

// KV bytes gathered = sparse layers × rows × KV bytes per token × batch × queries × head blocks,
// rows = top-k (+ the raw tail of an incomplete pool, always selected, when keys are pooled) and
// head blocks = ceil(local heads / 64) = 1 for every shipped deployment; the splits of a query
// partition its rows, so they gather each row once. The kernel reads its top-k indices once per
// query too: sparse layers × batch × queries × (top-k / pool) × 4 B.
TEST(TraceEmulate, SparseAttentionGathersTopkKvRowsPerQuery) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const uint64_t B = 2, Q = 2;
    const Step st = make(w, decode(kContext, B, Q));
    const uint64_t pool = st.m.indexer.pool_tokens;
    const uint64_t rows = st.m.indexer.topk + (pool > 1 ? kContext % pool : 0);
    const uint64_t hg = ceil_div(st.m.local_heads(), uint64_t(geometry::kAttnHeadsPerCta));
    ASSERT_EQ(hg, 1u);
    const uint64_t dsa = st.m.count_layers(AttentionKind::dsa);
    const uint64_t kv = dsa * rows * st.m.mla.kv_bytes_per_token * B * Q * hg;
    const uint64_t idx = dsa * B * Q * hg * (st.m.indexer.topk / pool) * 4;
    EXPECT_EQ(st.s.by_class.at("kv_cache").bytes_read, kv);
    EXPECT_EQ(st.s.by_class.at("topk_indices").bytes_read, idx);
    // FLOPs: 2 · 64 head rows per block (the kernel computes whole blocks) · (2 · kv_lora + rope)
    // per gathered row and query (absorbed MLA), BF16.
    const double f = 2.0 * double(hg * geometry::kAttnHeadsPerCta) *
                     (2.0 * st.m.mla.kv_lora_rank + st.m.mla.qk_rope_head_dim) * double(dsa * rows * B * Q);
    EXPECT_DOUBLE_EQ(flops(st.s, "sparse_attn", Precision::bf16), f);
  }
}

// Appends: KV written = sparse layers × batch × queries × 656 B; indexer written = full layers ×
// batch × (entries(c) − (c − q) / pool) × 132 B (pool 1: queries × 132 B; pooled: from the first
// incomplete pool to the end, reading back that pool's raw tail).
TEST(TraceEmulate, AppendsWriteTheNewTokensKeysAndLatents) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const uint64_t B = 3, Q = 2;
    const Step st = make(w, decode(kContext, B, Q));
    const uint64_t pool = st.m.indexer.pool_tokens, eb = st.m.indexer.bytes_per_entry();
    EXPECT_EQ(written_of(st.s, "kv_append"),
              uint64_t(st.m.count_layers(AttentionKind::dsa)) * B * Q * st.m.mla.kv_bytes_per_token);
    const uint64_t slots = st.m.indexer_entries(kContext) - (kContext - Q) / pool;
    EXPECT_EQ(written_of(st.s, "index_append"), uint64_t(st.m.count_indexer_layers()) * B * slots * eb);
    EXPECT_EQ(read_of(st.s, "index_append"), uint64_t(st.m.count_indexer_layers()) * B * ((kContext - Q) % pool) * eb);
  }
}

// Weights read in decode (batch·queries ≤ 64 rows: one tile row per GEMM, every weight read once) =
// all of this GPU's weights − the embedding (a lookup, not a GEMM) − the routed experts that get no
// token: Σ_moe layers (local experts − touched) × 3·hidden·moe_inter bytes, touched = round(El ·
// (1 − (1 − active/E)^tokens)).
TEST(TraceEmulate, DecodeReadsEveryWeightOnceExceptIdleExperts) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const uint64_t B = 4, Q = 1;
    const Step st = make(w, decode(kContext, B, Q));
    const auto& mlp = st.m.mlp;
    const uint64_t El = st.m.local_routed_experts();
    const uint64_t touched = uint64_t(std::llround(El * (1.0 - std::pow(1.0 - double(mlp.active_experts) / mlp.routed_experts, double(B * Q)))));
    EXPECT_EQ(touched, experts_touched(El, mlp.active_experts, mlp.routed_experts, B * Q));
    uint64_t moe_layers = 0;
    for (const auto& l : st.m.layers) moe_layers += l.mlp == MlpKind::moe;
    const uint64_t idle = moe_layers * (El - touched) * st.m.weight_bytes(st.m.routed_expert_params());
    const uint64_t embedding = st.m.weight_bytes(st.m.embedding_params() / 2);
    const uint64_t all = st.m.footprint(kContext, B).at(TensorClass::weights);
    EXPECT_EQ(st.s.by_class.at("weights").footprint_bytes, all);
    EXPECT_EQ(st.s.by_class.at("weights").bytes_read, all - embedding - idle);
  }
}

// The trace's tensors hold the footprint the shape predicts, class by class.
TEST(TraceEmulate, TensorFootprintsMatchTheShape) {
  for (const auto& w : shipped_workloads()) {
    SCOPED_TRACE(w);
    const Step st = make(w, decode(kContext, 2, 1));
    for (const auto& [cls, bytes] : st.m.footprint(kContext, 2)) {
      if (bytes == 0) continue;
      EXPECT_EQ(st.s.by_class.at(to_string(cls)).footprint_bytes, bytes) << to_string(cls);
    }
  }
}

// GLM-5.3-Flash KDA layers: the state (batch × local heads × dk × dv × 4 B) is read and written once
// per step; FLOPs = 7 · dk · dv per token and head.
TEST(TraceEmulate, LinearLayersReadAndWriteTheirStateOnce) {
  const uint64_t B = 2, Q = 2;
  const Step st = make("glm-5.3-flash", decode(kContext, B, Q));
  const auto& lin = st.m.linear;
  const uint64_t state = 34ull * B * st.m.local_linear_heads() * lin.head_dim * lin.head_dim * lin.state_elem_bytes;
  EXPECT_EQ(read_of(st.s, "linear_state"), state);
  EXPECT_EQ(written_of(st.s, "linear_state"), state);
  EXPECT_DOUBLE_EQ(flops(st.s, "linear_state", Precision::simt),
                   34.0 * lin.flops_per_token_per_head_per_dk_dv * lin.head_dim * lin.head_dim *
                       st.m.local_linear_heads() * B * Q);
}

// The rows one decode query of `layer` attends to: its splits' gathers, in split order (one head
// block, batch 1, one query).
std::vector<uint32_t> selected_rows(const Step& st, int layer) {
  std::vector<uint32_t> rows;
  for (const auto& a : st.t.accesses)
    if (a.kind == AccessRecord::Kind::gather && st.t.kernels[a.kernel].layer == layer)
      rows.insert(rows.end(), a.rows.begin(), a.rows.end());
  return rows;
}

// GLM-5.2's shared layers run no indexer kernels and wait for the top-k of their source layer (the
// last kernel of its radix-select chain: init, 3 x (histogram, pick), tie count, collect, sort).
TEST(TraceEmulate, SharedLayersReuseThePreviousFullLayersTopk) {
  const Step st = make("glm-5.2", decode(8192, 1, 1));
  EXPECT_EQ(st.s.by_kind.at("indexer_score").kernels, 21u);
  EXPECT_EQ(st.s.by_kind.at("topk").kernels, 21u * (3 + 2 * geometry::kTopkPasses + 1));
  std::map<int, uint32_t> topk_of_layer;
  for (const auto& k : st.t.kernels)
    if (k.kind == KernelKind::topk) topk_of_layer[k.layer] = k.id;
  EXPECT_EQ(topk_of_layer.size(), 21u);
  int attention = 0;
  for (const auto& k : st.t.kernels) {
    if (k.kind != KernelKind::sparse_attn || k.name.find("combine") != std::string::npos) continue;
    ++attention;
    const int src = st.m.layers[k.layer].topk_source;
    EXPECT_TRUE(std::find(k.deps.begin(), k.deps.end(), topk_of_layer.at(src)) != k.deps.end()) << k.name;
  }
  EXPECT_EQ(attention, 78);
  // Shared layers gather exactly the rows their source picked.
  const auto g6 = selected_rows(st, 6), g7 = selected_rows(st, 7);
  ASSERT_FALSE(g6.empty());
  EXPECT_EQ(g6, g7);
}

// Every kernel waits for the previous one on its stream: the step is one ordered chain on stream 0.
TEST(TraceEmulate, KernelsKeepTheirStreamOrder) {
  const Step st = make("glm-5", decode(4096, 1, 1));
  for (size_t i = 1; i < st.t.kernels.size(); ++i) {
    const auto& d = st.t.kernels[i].deps;
    EXPECT_TRUE(std::find(d.begin(), d.end(), uint32_t(i - 1)) != d.end()) << st.t.kernels[i].name;
  }
}

// Top-k rows: ascending, distinct, inside the visible context, top-k of them, the recent window
// included, and clustered (more adjacent pairs than uniform picks would give: ≈ k²/n).
TEST(TraceEmulate, TopkRowsHaveARecentWindowAndClusters) {
  const Step st = make("deepseek-v3.2", decode(1 << 20, 1, 1));
  {
    const std::vector<uint32_t> rows = selected_rows(st, st.t.kernels[st.t.accesses.front().kernel].layer);
    ASSERT_EQ(rows.size(), st.m.indexer.topk);
    uint64_t adjacent = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
      ASSERT_LT(rows[i - 1], rows[i]);
      adjacent += rows[i] == rows[i - 1] + 1;
    }
    EXPECT_EQ(rows.back(), (1u << 20) - 1);
    EXPECT_EQ(rows[rows.size() - st.m.selection.recent_tokens], (1u << 20) - st.m.selection.recent_tokens);
    const double uniform_adjacent = 2048.0 * 2048.0 / (1 << 20);
    EXPECT_GT(double(adjacent), st.m.selection.recent_tokens + 10 * uniform_adjacent);
  }
}

TEST(TraceEmulate, SameSeedGivesIdenticalBytesAndAnotherSeedDoesNot) {
  const ModelShape m = load_model_shape_file(workload_file("glm-5.3-flash"));
  StepParams p = decode(50000, 2, 2);
  const std::string a = temp_path("a.itr"), b = temp_path("b.itr"), c = temp_path("c.itr");
  write_trace(emulate_step(m, p, indexsim::test::hopper_limits()), a);
  write_trace(emulate_step(m, p, indexsim::test::hopper_limits()), b);
  p.seed = 8;
  write_trace(emulate_step(m, p, indexsim::test::hopper_limits()), c);
  EXPECT_EQ(file_bytes(a), file_bytes(b));
  EXPECT_NE(file_bytes(a), file_bytes(c));
}

// Prefill of a chunk of C tokens ending at context c, in query tiles of 64: scoring FLOPs =
// full layers × 2·IH·Id · Σ_{t<C} (c − C + t + 1) (causal, grows with position); cache bytes read =
// full layers × Σ_tiles (c − C + tile_end) × 132 (each tile passes over what its last query sees).
TEST(TraceEmulate, PrefillScoringIsCausalOverTheChunk) {
  StepParams p;
  p.phase = Phase::prefill;
  p.context = 20000;
  p.chunk_tokens = 1000;
  const Step st = make("glm-5.2", p);
  const uint64_t C = 1000, c = 20000, qt = st.m.kernels.indexer_q_tile_tokens;
  const double IH = st.m.local_index_heads(), Id = st.m.indexer.head_dim;
  const double visible_sum = double(C) * (c - C) + double(C) * (C + 1) / 2;
  EXPECT_DOUBLE_EQ(flops(st.s, "indexer_score", Precision::fp8), 21 * 2 * IH * Id * visible_sum);
  uint64_t entries = 0;
  for (uint64_t j = 0; j * qt < C; ++j) entries += c - C + std::min(C, (j + 1) * qt);
  EXPECT_EQ(read_of(st.s, "indexer_score"), 21 * entries * 132);
  // The GEMMs now have 1000 rows: 128-row tiles.
  EXPECT_GT(st.s.by_kind.at("gemm").ctas, 1000u);
}

// A copy of N bytes reads N and writes N, whatever the CTA count.
TEST(TraceEmulate, CopyMovesItsBytesOnceEachWay) {
  for (uint64_t n : {uint64_t(1), uint64_t(4096), uint64_t(1 << 30) + 12345}) {
    for (uint32_t ctas : {0u, 7u, 528u}) {
      CopyShape cs;
      cs.ctas = ctas;
      const Summary s = summarize(emulate_copy(n, cs));
      EXPECT_EQ(s.all.bytes_read, n) << n << " " << ctas;
      EXPECT_EQ(s.all.bytes_written, n) << n << " " << ctas;
    }
  }
}

// A copy whose CTAs move one chunk each (BabelStream's one double a thread: 2^25 doubles in 1024-
// thread CTAs) stores after its loads land (stores_after_math); a grid-stride loop of several
// chunks a CTA, a read-only stream and a write-only fill do not.
TEST(TraceEmulate, AOneChunkCopyStoresAfterItsLoadsAndALoopDoesNot) {
  const uint64_t n = uint64_t(1) << 28;  // 2^25 doubles
  CopyShape one;
  one.threads = 1024;
  one.vector_bytes = 8;  // 32768 chunks, 32768 CTAs
  EXPECT_TRUE(emulate_copy(n, one).kernels.at(0).stores_after_math);
  CopyShape add = one;
  add.sources = 2;
  EXPECT_TRUE(emulate_copy(n, add).kernels.at(0).stores_after_math);
  CopyShape loop = one;
  loop.ctas = 528;  // 62 chunks a CTA
  EXPECT_FALSE(emulate_copy(n, loop).kernels.at(0).stores_after_math);
  CopyShape read = one;
  read.write = false;
  EXPECT_FALSE(emulate_copy(n, read).kernels.at(0).stores_after_math);
  CopyShape fill = one;
  fill.sources = 0;
  EXPECT_FALSE(emulate_copy(n, fill).kernels.at(0).stores_after_math);
}

// The read-only stream (CopyShape::write = false) reads N bytes and writes none, from one tensor.
TEST(TraceEmulate, ReadStreamReadsItsBytesOnceAndWritesNothing) {
  for (uint64_t n : {uint64_t(1), uint64_t(1 << 30) + 12345}) {
    for (uint32_t ctas : {0u, 7u}) {
      CopyShape cs;
      cs.ctas = ctas;
      cs.write = false;
      const TraceData t = emulate_copy(n, cs);
      const Summary s = summarize(t);
      EXPECT_EQ(s.all.bytes_read, n) << n << " " << ctas;
      EXPECT_EQ(s.all.bytes_written, 0u) << n << " " << ctas;
      EXPECT_EQ(t.tensors.size(), 1u);
    }
  }
}

// GEMM m×n×k in CUTLASS's 128×256 tiles (a device without wgmma): FLOPs = 2mnk; A is re-read by
// each of the ceil(n/256) column tiles, B by each of the ceil(m/128) row tiles; C is written once.
TEST(TraceEmulate, GemmRereadsPanelsPerTile) {
  const uint64_t m = 1024, n = 3072, k = 512;
  LaunchLimits ampere;
  ampere.warpgroup_mma = false;
  ampere.smem_per_cta_bytes = 163 * 1024;
  const TraceData t = emulate_gemm(m, n, k, Precision::fp8, ampere);
  const Summary s = summarize(t);
  EXPECT_DOUBLE_EQ(s.all.flops[static_cast<int>(Precision::fp8)], 2.0 * m * n * k);
  const uint64_t mt = ceil_div(m, 128), nt = ceil_div(n, 256);
  EXPECT_EQ(s.all.ctas, mt * nt);
  EXPECT_EQ(s.by_class.at("activations").bytes_read, m * k * nt);  // A, FP8
  EXPECT_EQ(s.by_class.at("weights").bytes_read, n * k * mt);      // B, FP8
  EXPECT_EQ(s.all.bytes_written, m * n * 2);                        // C, BF16
}

// DeepGEMM on Hopper, m >= 512: a multicast pair fetches the shared panel once between them, so
// that operand is read ceil(tiles along the pair's axis / 2) times instead of once per tile; the
// CUDA cores add 2 FLOPs per accumulator element per 128 of K (promotion); partial tiles compute
// whole (padded) tiles on the Tensor Cores.
TEST(TraceEmulate, DeepGemmMulticastHalvesTheSharedPanel) {
  const uint64_t m = 4096, n = 7168, k = 2048;
  const LaunchLimits hopper;
  GemmProblem p;
  p.m = m, p.n = n, p.k = k, p.precision = Precision::fp8;
  const GemmLaunch g = plan_gemm(p, hopper);
  ASSERT_EQ(g.multicast, 2u);
  const TraceData t = emulate_gemm(m, n, k, Precision::fp8, hopper);
  const Summary s = summarize(t);
  const uint64_t mt = ceil_div(m, g.block_m), nt = ceil_div(n, g.block_n);
  EXPECT_EQ(s.all.ctas, mt * nt);
  const uint64_t a_reads = g.multicast_on_a ? nt / 2 + nt % 2 : nt;
  const uint64_t b_reads = g.multicast_on_a ? mt : mt / 2 + mt % 2;
  EXPECT_EQ(s.by_class.at("activations").bytes_read, m * k * a_reads);
  EXPECT_EQ(s.by_class.at("weights").bytes_read, n * k * b_reads);
  EXPECT_EQ(s.all.bytes_written, m * n * 2);
  const double padded = double(mt * g.block_m) * double(nt * g.block_n);
  EXPECT_DOUBLE_EQ(s.all.flops[static_cast<int>(Precision::fp8)], 2.0 * padded * k);
  EXPECT_DOUBLE_EQ(s.all.flops[static_cast<int>(Precision::simt)], 2.0 * padded * double(k / 128));
}

TEST(TraceEmulate, BadStepParametersAreRefusedByName) {
  const ModelShape m = load_model_shape_file(workload_file("glm-5"));
  StepParams p = decode(10, 1, 1);
  p.batch = 0;
  EXPECT_THROW(emulate_step(m, p, indexsim::test::hopper_limits()), std::invalid_argument);
  p = decode(2, 1, 4);  // fewer tokens in the context than new ones
  try {
    emulate_step(m, p, indexsim::test::hopper_limits());
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("context"), std::string::npos);
  }
}

TEST(TraceEmulate, MtpDraftingVerifiesTheDraftsAndRunsTheModuleAfterTheLmHead) {
  // DeepSeek-V3.2 with its one MTP module drafting (mtp.enabled): one more layer (index 61: DSA with
  // its own indexer, MoE) after the model's 61; a decode step verifies 1 + 1 tokens a sequence; the
  // module runs after the LM head: eh_proj (2h -> h, 2 x M x 2h x h FLOPs), its layer, the LM head
  // again. A step emits 1 + p tokens a sequence (p = mtp.acceptance_rate, 0.85).
  const ModelShape off = load_model_shape_file(workload_file("deepseek-v3.2"));
  const ModelShape m = load_model_shape_file(workload_file("deepseek-v3.2"), {"mtp.enabled=true"});
  ASSERT_EQ(m.layers.size(), off.layers.size() + 1);
  const LayerShape& l = m.layers.back();
  EXPECT_TRUE(l.mtp);
  EXPECT_EQ(l.index, 61);
  EXPECT_EQ(l.attention, AttentionKind::dsa);
  EXPECT_EQ(l.indexer, IndexerMode::full);
  EXPECT_EQ(l.mlp, MlpKind::moe);
  EXPECT_DOUBLE_EQ(m.mtp.tokens_per_step(), 1.85);
  EXPECT_DOUBLE_EQ(off.mtp.tokens_per_step(), 1.0);
  const uint64_t h = m.hidden_size;
  EXPECT_EQ(m.layer_params(61).mtp_proj, 2 * h * h);
  EXPECT_EQ(m.parameters().total - off.parameters().total, [&] {
    ModelShape whole = m;
    whole.deployment = DeploymentShape{};
    return whole.layer_params(61).total();
  }());

  const TraceData t = emulate_step(m, decode(4096, 1, 1), indexsim::test::hopper_limits());
  EXPECT_EQ(t.metadata["step"]["queries"], 2);
  auto at = [&](const std::string& name) {
    for (size_t i = 0; i < t.kernels.size(); ++i)
      if (t.kernels[i].name == name) return long(i);
    ADD_FAILURE() << "no kernel " << name;
    return -1L;
  };
  EXPECT_LT(at("lm_head"), at("L61.mtp_eh_proj"));
  EXPECT_LT(at("L61.mtp_eh_proj"), at("L61.sparse_attn"));
  EXPECT_LT(at("L61.sparse_attn"), at("L61.mtp_lm_head"));
  // eh_proj reads its own FP8 weights, 2h x h bytes.
  uint64_t eh_w = 0;
  for (const auto& tensor : t.tensors)
    if (tensor.name == "L61.mtp_eh_proj_w") eh_w = tensor.bytes;
  EXPECT_EQ(eh_w, 2 * h * h);
  EXPECT_EQ(t.kernels[size_t(at("L61.mtp_eh_proj"))].kind, KernelKind::gemm);
  // A decode step's queries are the drafts verified: another count is refused, naming both.
  try {
    emulate_step(m, decode(4096, 1, 3), indexsim::test::hopper_limits());
    FAIL() << "3 queries accepted with one MTP module";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("verifies 2 tokens"), std::string::npos) << e.what();
  }
}
