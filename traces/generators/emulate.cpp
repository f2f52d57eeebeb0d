// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/emulate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "traces/generators/attention_kernels.hpp"
#include "traces/generators/collective_kernels.hpp"
#include "traces/generators/gemm_kernels.hpp"
#include "traces/generators/micro_batches.hpp"
#include "traces/kernel_geometry.hpp"

namespace indexsim::trace {

namespace {

using namespace detail;

class StepEmulator {
 public:
  StepEmulator(const ModelShape& m, const StepParams& p, const LaunchLimits& lim)
      : m_(m), step_(p), lim_(lim) {
    mb_.p = p;
    mb_.T = p.new_tokens();
  }

  TraceData run() {
    validate(step_);
    if (step_.context > UINT32_MAX) throw std::invalid_argument("context must fit in 32 bits (row indices)");
    check_fabric();
    plan_micro_batches();
    for_each_part([&] { build_part_tensors(); });
    // The model's layers and its LM head, then each MTP module (drafting): its projection of the
    // hidden state and the next token's embedding, its layer, and the shared LM head again. With two
    // micro-batches each layer is enqueued for the first, then the second, as SGLang's two-batch
    // overlap interleaves them.
    for (const LayerShape& l : m_.layers)
      if (!l.mtp) for_each_part([&] { layer(l); });
    for_each_part([&] { lm_head(); });
    for (const LayerShape& l : m_.layers)
      if (l.mtp)
        for_each_part([&] {
          const uint32_t w = weights(base_name(l.index, "mtp_eh_proj_w"), l.index, m_.weight_bytes(m_.layer_params(l.index).mtp_proj));
          gemm(l.index, "mtp_eh_proj", KernelKind::gemm, tokens(), m_.hidden_size, 2ull * m_.hidden_size, w, 0);
          layer(l);
          lm_head(lname(l.index, "mtp_lm_head"));
        });
    for_each_part([&] {
      b_.t.tensors[mb_.act_in].bytes = mb_.act_bytes;
      b_.t.tensors[mb_.act_out].bytes = mb_.act_bytes;
      b_.t.tensors[mb_.workspace].bytes = std::max<uint64_t>(mb_.workspace_bytes, 1);
    });
    if (parts_.size() > 1) interleave_stages(b_.t);
    finish_metadata();
    return std::move(b_.t);
  }

 private:
  // Per full layer: its top-k kernel, index tensor and the rows each (sequence, query tile) picked,
  // reused by the shared layers that follow.
  struct TopkResult {
    uint32_t kernel = 0, tensor = 0;
    std::vector<std::vector<uint32_t>> rows;  // [s * tiles + j]
  };

  const ModelShape& m_;
  const StepParams& step_;  // the whole step
  const LaunchLimits lim_;
  Builder b_;
  TopkPicker picker_;
  uint32_t lm_w_ = 0;
  std::map<std::string, uint32_t> shared_;  // tensors by name that the micro-batches share (weights; caches split by tokens)
  std::map<std::pair<int, std::string>, uint32_t> appended_;  // (layer, cache): the kernel that last appended to it

  // One micro-batch: its step, stream and tensors (a step without two-batch overlap is one, the
  // whole step). The one being built is mb_; switch_to() parks it in parts_ and takes another.
  struct Part {
    StepParams p;
    uint64_t T = 0;
    uint64_t first_sequence = 0;  // of the whole batch: the emulated top-k picks follow the sequence
    std::string prefix;           // of its kernel and tensor names
    uint32_t stream = 0, act_in = 0, act_out = 0, logits = 0, workspace = 0;
    uint64_t workspace_bytes = 0, act_bytes = 0;
    std::map<int, TopkResult> topk;
    std::optional<CommBuffers> comm;
  };
  Part mb_;
  std::vector<Part> parts_;    // parts_[cur_] is the slot mb_ goes back to
  size_t cur_ = 0;
  bool split_tokens_ = false;  // the micro-batches split one sequence's tokens, not the sequences
  std::string split_;          // how the step was split, for the metadata

  void switch_to(size_t i) {
    if (i == cur_) return;
    std::swap(mb_, parts_[cur_]);
    std::swap(mb_, parts_[i]);
    cur_ = i;
    b_.current_stream = mb_.stream;
  }
  template <class F>
  void for_each_part(F&& f) {
    for (size_t i = 0; i < parts_.size(); ++i) {
      switch_to(i);
      f();
    }
    switch_to(0);
  }

  void plan_micro_batches() {
    const MicroBatchSplit split = split_micro_batches(m_, step_);
    split_ = split.how;
    split_tokens_ = split.by_tokens;
    parts_.assign(1, Part{});
    if (split.parts.size() < 2) return;
    mb_.p = split.parts[0];
    mb_.T = mb_.p.new_tokens();
    Part second;
    second.p = split.parts[1];
    second.T = second.p.new_tokens();
    second.first_sequence = split.second_first_sequence;
    second.prefix = kSecondMicroBatchPrefix;
    second.stream = 1;
    parts_.push_back(std::move(second));
  }

  // Weights are the model's: one tensor a name, whichever micro-batch asks.
  uint32_t weights(const std::string& name, int layer, uint64_t bytes) {
    auto [it, fresh] = shared_.try_emplace(name, 0);
    if (fresh) it->second = b_.tensor(name, TensorClass::weights, layer, bytes);
    return it->second;
  }
  // A cache of the sequences: a micro-batch of its own sequences has its own; micro-batches that
  // split one sequence's tokens share it, as large as the later one's context needs.
  uint32_t cache(const std::string& what, TensorClass cls, int layer, uint64_t bytes) {
    auto [it, fresh] = shared_.try_emplace(split_tokens_ ? base_name(layer, what) : lname(layer, what), 0);
    if (fresh) it->second = b_.tensor(it->first, cls, layer, bytes);
    else b_.t.tensors[it->second].bytes = std::max(b_.t.tensors[it->second].bytes, bytes);
    return it->second;
  }
  // Split by tokens, a micro-batch's reads of a cache wait for the earlier one's append to it.
  std::vector<uint32_t> after_earlier_append(int layer, const std::string& cache) const {
    if (!split_tokens_ || cur_ == 0) return {};
    const auto it = appended_.find({layer, cache});
    return it == appended_.end() ? std::vector<uint32_t>{} : std::vector<uint32_t>{it->second};
  }

  uint64_t tokens() const { return uint64_t(mb_.p.batch) * mb_.T; }
  uint32_t wbits() const { return precision_bits(m_.weight_precision); }
  uint64_t q_tiles() const { return ceil_div(mb_.T, m_.kernels.indexer_q_tile_tokens); }
  // Queries [a, b) of query tile j; the last one sees `visible` tokens.
  uint64_t tile_begin(uint64_t j) const { return j * m_.kernels.indexer_q_tile_tokens; }
  uint64_t tile_end(uint64_t j) const { return std::min<uint64_t>(mb_.T, (j + 1) * m_.kernels.indexer_q_tile_tokens); }
  uint64_t visible(uint64_t t) const { return mb_.p.context - mb_.T + t + 1; }  // tokens seen by new token t

  // The deployment's groups must fit the fabric: one NVLink domain (traffic between domains, over
  // NICs, is not modelled).
  void check_fabric() const {
    const uint32_t gpus = m_.deployment.gpus;
    if (gpus < 2) return;
    if (lim_.fabric.domain_gpus == 0)
      throw std::invalid_argument("workload deployment.gpus = " + std::to_string(gpus) +
                                  ": the hardware file has no fabric section to connect them");
    if (gpus > lim_.fabric.domain_gpus)
      throw std::invalid_argument("workload deployment.gpus = " + std::to_string(gpus) + ": the hardware's fabric connects " +
                                  std::to_string(lim_.fabric.domain_gpus) +
                                  " GPUs (fabric.gpus_per_switch_domain); traffic between domains is not modelled");
  }

  static std::string base_name(int layer, const std::string& what) { return "L" + std::to_string(layer) + "." + what; }
  std::string lname(int layer, const std::string& what) const { return mb_.prefix + base_name(layer, what); }

  // The micro-batch's activations and scratch; the first also creates the embedding and LM head.
  void build_part_tensors() {
    mb_.act_in = b_.tensor(mb_.prefix + "act.in", TensorClass::activations, -1, 0);
    mb_.act_out = b_.tensor(mb_.prefix + "act.out", TensorClass::activations, -1, 0);
    if (cur_ == 0) {
      weights("embedding", -1, m_.weight_bytes(m_.embedding_params() / 2));
      lm_w_ = weights("lm_head", -1, m_.weight_bytes(m_.embedding_params() / 2));
    }
    if (m_.count_indexer_layers() > 0)
      mb_.logits = b_.tensor(mb_.prefix + "indexer_logits", TensorClass::scratch, -1,
                          tokens() * m_.indexer_entries(mb_.p.context) * 4);
    // Top-k and split-KV attention scratch (sized once every kernel is built).
    mb_.workspace = b_.tensor(mb_.prefix + "kernel_workspace", TensorClass::scratch, -1, 0);
  }

  // A projection GEMM: activations [tokens × K] times weights [N × K] (slice at w_base of w_tensor),
  // launched as plan_gemm picks for this device (DeepGEMM for FP8 on Hopper, else CUTLASS tiles).
  uint32_t gemm(int layer, const std::string& what, KernelKind kind, uint64_t M, uint64_t N, uint64_t K,
                uint32_t w_tensor, uint64_t w_base, std::vector<uint32_t> deps = {}) {
    GemmProblem prob;
    prob.m = M, prob.n = N, prob.k = K, prob.precision = m_.weight_precision;
    const GemmLaunch g = plan_gemm(prob, lim_);
    GemmOperands o;
    o.a_tensor = mb_.act_in;
    o.b_tensor = w_tensor;
    o.b_base = w_base;
    o.c_tensor = mb_.act_out;
    o.a_bits = wbits();  // activations are quantised to the weights' precision before the GEMM
    o.b_bits = wbits();
    o.c_bits = 16;
    const uint32_t id = emit_gemm(b_, lname(layer, what), kind, layer, M, N, K, m_.weight_precision, g, o, std::move(deps));
    mb_.act_bytes = std::max({mb_.act_bytes, bytes_of(M * K, 16), bytes_of(M * N, 16)});
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
    const uint64_t H = m_.local_heads(), h = m_.hidden_size, M = tokens(), B = mb_.p.batch;
    const auto params = m_.layer_params(L);
    const uint32_t w = weights(base_name(L, "attn_w"), L, m_.weight_bytes(params.attention));
    const uint64_t kvb = a.kv_bytes_per_token;
    const uint32_t kv = cache("kv_cache", TensorClass::kv_cache, L, B * mb_.p.context * kvb);

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
    b_.strided(app, kv, true, 0, B, (mb_.p.context - mb_.T) * kvb, int64_t(mb_.p.context * kvb), mb_.T * kvb, 1, 0);
    const std::vector<uint32_t> after = after_earlier_append(L, "kv_cache");
    appended_[{L, "kv_cache"}] = app;

    sparse_attention(l, kv, after);

    const uint64_t n_ov = H * a.v_head_dim;
    gemm(L, "o_absorb", KernelKind::gemm, M, n_ov, a.kv_lora_rank, w, off);  // W_UV back from the latent
    off += bytes_of(n_ov * a.kv_lora_rank, wbits());
    gemm(L, "o_proj", KernelKind::gemm, M, h, n_ov, w, off);
    // Each GPU of the attention TP group holds a partial sum of the output projection.
    all_reduce(L, "attn_all_reduce", m_.deployment.attention_tensor_parallel);
  }

  // An all-reduce of the step's hidden states (BF16) over `group` GPUs, after the kernel before it.
  void all_reduce(int L, const std::string& what, uint32_t group) {
    if (group < 2) return;
    CollectiveShape c;
    c.op = KernelKind::all_reduce;
    c.bytes = tokens() * m_.hidden_size * 2;
    c.gpus = group;
    c.name = lname(L, what);
    c.layer = L;
    emit_collective(b_, c, lim_.fabric, comm_buffers());
    note_activations();
  }

  // One communicator for the step: collectives work in place on the activations and share the
  // peers' window and the receive buffers.
  CommBuffers comm_buffers() {
    if (!mb_.comm) {
      CommBuffers c;
      c.in = c.out = mb_.act_out;
      c.peer = b_.tensor(mb_.prefix + "comm.peer", TensorClass::peer, -1, 1);
      c.fifo = b_.tensor(mb_.prefix + "comm.fifo", TensorClass::scratch, -1, 1);
      mb_.comm = c;
    }
    return *mb_.comm;
  }
  // A communication kernel grows the activations it works on in place: keep the step's size.
  void note_activations() { mb_.act_bytes = std::max(mb_.act_bytes, b_.t.tensors[mb_.act_out].bytes); }

  void indexer(const LayerShape& l) {
    const int L = l.index;
    const auto& ix = m_.indexer;
    const auto& ks = m_.kernels;
    const uint64_t IH = m_.local_index_heads(), M = tokens(), B = mb_.p.batch, h = m_.hidden_size;
    const uint64_t eb = ix.bytes_per_entry(), cap = m_.indexer_entries(mb_.p.context), pool = ix.pool_tokens;
    const uint32_t w = weights(base_name(L, "indexer_w"), L, m_.weight_bytes(m_.layer_params(L).indexer));
    const uint32_t cache = this->cache("indexer_cache", TensorClass::indexer_cache, L, B * cap * eb);
    const uint64_t kt = ix.topk / pool;  // entries selected per query
    const uint32_t idx = b_.tensor(lname(L, "topk_indices"), TensorClass::topk_indices, L, M * kt * 4);

    gemm(L, "index_k_proj", KernelKind::gemm, M, ix.entry_dim() + IH, h, w, 0);  // wk (every vector of a token) and weights_proj
    gemm(L, "index_q_proj", KernelKind::gemm, M, IH * ix.head_dim, m_.mla.q_lora_rank, w,
         bytes_of((ix.entry_dim() + IH) * h, wbits()));

    // Append: rewrite from the first incomplete pool to the end (with pool 1: the T new keys), reading
    // the old raw tail of an incomplete pool back to pool it with the new keys.
    const uint64_t old_ctx = mb_.p.context - mb_.T, first_slot = old_ctx / pool;
    const uint64_t old_tail = old_ctx % pool;
    const uint32_t app = b_.kernel(lname(L, "index_append"), KernelKind::index_append, L, {B, 1, 1}, ks.elementwise);
    b_.strided(app, cache, false, 0, B, first_slot * eb, int64_t(cap * eb), old_tail * eb, 1, 0);
    b_.strided(app, cache, true, 0, B, first_slot * eb, int64_t(cap * eb), (cap - first_slot) * eb, 1, 0);
    if (pool > 1) b_.k(app).flops[static_cast<int>(Precision::simt)] = double(B) * mb_.T * ix.entry_dim() * 4.0;
    const std::vector<uint32_t> after = after_earlier_append(L, "indexer_cache");
    appended_[{L, "indexer_cache"}] = app;

    const uint64_t row4 = cap * 4;  // one query's logits row
    PagedMqaLogits pm{lname(L, "indexer_score"), L, B, mb_.T, IH, ix.head_dim, ix.entry_dim(), eb, cap,
                      m_.indexer_entries(visible(mb_.T - 1)), row4, mb_.act_in, cache, mb_.logits, after};
    if (mb_.p.phase == Phase::decode && q_tiles() == 1 && lim_.warpgroup_mma && paged_mqa_smem(pm) <= lim_.smem_per_cta_bytes) {
      paged_mqa_logits(b_, pm, lim_);
    } else {
      tiled_scoring(L, cache, row4, after);
    }
    double flops = 0;
    for (uint64_t t = 0; t < mb_.T; ++t) flops += 2.0 * IH * ix.entry_dim() * double(m_.indexer_entries(visible(t)));
    b_.k(uint32_t(b_.t.kernels.size() - 1)).flops[static_cast<int>(ix.score_precision)] = flops * B;

    RadixTopk rt;
    rt.name_prefix = lname(L, "");
    rt.layer = L;
    rt.rows = tokens();
    rt.entries = m_.indexer_entries(visible(tile_end(q_tiles() - 1) - 1));
    rt.kt = kt;
    rt.row4 = row4;
    rt.logits = mb_.logits;
    rt.workspace = mb_.workspace;
    rt.indices = idx;
    const RadixTopkKernels top = radix_topk(b_, rt);
    mb_.workspace_bytes = std::max(mb_.workspace_bytes, top.workspace_bytes);
    const uint32_t tk = top.sort;
    TopkResult r;
    r.kernel = tk;
    r.tensor = idx;
    const uint64_t nq = q_tiles();
    r.rows.resize(B * nq);
    for (uint64_t s = 0; s < B; ++s)
      for (uint64_t j = 0; j < nq; ++j) r.rows[s * nq + j] = pick_rows(L, s, j);
    mb_.topk[L] = std::move(r);
  }

  // Indexer scoring in tiles of the workload config: per sequence and query tile, one CTA per tile
  // of the entries the tile's last query sees (prefill, and GPUs without wgmma).
  void tiled_scoring(int L, uint32_t cache, uint64_t row4, const std::vector<uint32_t>& after) {
    const auto& ks = m_.kernels;
    const uint64_t B = mb_.p.batch, eb = m_.indexer.bytes_per_entry(), cap = m_.indexer_entries(mb_.p.context);
    const uint64_t tt = ks.indexer_tile_tokens, nq = q_tiles();
    std::vector<uint64_t> tiles_before(nq + 1, 0);
    for (uint64_t j = 0; j < nq; ++j)
      tiles_before[j + 1] = tiles_before[j] + ceil_div(m_.indexer_entries(visible(tile_end(j) - 1)), tt);
    const uint64_t X = tiles_before[nq];
    const uint32_t sc = b_.kernel(lname(L, "indexer_score"), KernelKind::indexer_score, L, {X, B, 1}, ks.indexer_score, after);
    for (uint64_t s = 0; s < B; ++s)
      for (uint64_t j = 0; j < nq; ++j) {
        const uint64_t e = m_.indexer_entries(visible(tile_end(j) - 1)), full = e / tt, rem = e % tt;
        const uint64_t c0 = s * X + tiles_before[j], qn = tile_end(j) - tile_begin(j);
        b_.strided(sc, cache, false, c0, full, s * cap * eb, int64_t(tt * eb), tt * eb, 1, 0);
        b_.strided(sc, cache, false, c0 + full, rem ? 1 : 0, s * cap * eb + full * tt * eb, 0, rem * eb, 1, 0);
        const uint64_t lbase = (s * mb_.T + tile_begin(j)) * row4;
        b_.strided(sc, mb_.logits, true, c0, full, lbase, int64_t(tt * 4), tt * 4, qn, int64_t(row4));
        b_.strided(sc, mb_.logits, true, c0 + full, rem ? 1 : 0, lbase + full * tt * 4, 0, rem * 4, qn, int64_t(row4));
      }
  }

  // The token rows the last query of tile j of sequence s attends to; the tile's other queries share
  // them (an approximation for prefill, where neighbouring queries' picks overlap heavily; in decode
  // a tile holds all of a sequence's new tokens). With pooled keys, top-k picks pooled entries that
  // expand to `pool` consecutive tokens, and the incomplete tail pool is always in.
  std::vector<uint32_t> pick_rows(int layer, uint64_t s, uint64_t j) {
    Rng rng(sub_seed(mb_.p.seed, uint64_t(layer), mb_.first_sequence + s, j));
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

  void sparse_attention(const LayerShape& l, uint32_t kv, const std::vector<uint32_t>& after) {
    const int L = l.index;
    const auto& a = m_.mla;
    const TopkResult& src = mb_.topk.at(l.topk_source);
    SparseMla sm;
    sm.name = lname(L, "sparse_attn");
    sm.layer = L;
    sm.heads = m_.local_heads();
    sm.batch = mb_.p.batch;
    sm.q_per_seq = mb_.T;
    sm.q_tile = m_.kernels.indexer_q_tile_tokens;
    sm.context = mb_.p.context;
    sm.kv_row_bytes = a.kv_bytes_per_token;
    sm.d_latent = a.kv_lora_rank;
    sm.d_rope = a.qk_rope_head_dim;
    sm.index_entries = m_.indexer.topk / m_.indexer.pool_tokens;
    sm.compute = a.compute_precision;
    sm.kv = kv;
    sm.indices = src.tensor;
    sm.q = mb_.act_in;
    sm.out = mb_.act_out;
    sm.workspace = mb_.workspace;
    // The data dependency on the top-k is explicit even where stream order implies it, so that a
    // transform moving kernels to other streams keeps it; a shared layer names an earlier layer's.
    sm.deps = {src.kernel};
    sm.deps.insert(sm.deps.end(), after.begin(), after.end());
    sm.rows = &src.rows;
    mb_.workspace_bytes = std::max(mb_.workspace_bytes, sparse_mla(b_, sm, lim_));
  }

  void linear_layer(const LayerShape& l) {
    const int L = l.index;
    const auto& lin = m_.linear;
    const uint64_t H = m_.local_linear_heads(), HD = H * lin.head_dim, h = m_.hidden_size, M = tokens(),
                   B = mb_.p.batch;
    const uint32_t w = weights(base_name(L, "attn_w"), L, m_.weight_bytes(m_.layer_params(L).attention));
    const uint64_t per_seq = m_.linear_state_bytes_per_sequence(L);
    const uint32_t st = cache("linear_state", TensorClass::linear_state, L, B * per_seq);
    gemm(L, "kda_in_proj", KernelKind::gemm, M, 4 * HD + H, h, w, 0);
    // One CTA per (head, sequence) holds the head's dk×dv state: read once, updated over the step's
    // tokens (recurrently in decode, chunk-wise on Tensor Cores in prefill), written back once.
    const uint32_t id = b_.kernel(lname(L, "linear_state_update"), KernelKind::linear_state, L, {H, B, 1}, m_.kernels.linear_state,
                                  after_earlier_append(L, "linear_state"));
    appended_[{L, "linear_state"}] = id;
    const uint64_t head_bytes = per_seq / H;
    b_.strided(id, st, false, 0, H * B, 0, int64_t(head_bytes), head_bytes, 1, 0);
    b_.strided(id, st, true, 0, H * B, 0, int64_t(head_bytes), head_bytes, 1, 0);
    const Precision prec = mb_.p.phase == Phase::decode ? Precision::simt : Precision::bf16;
    b_.k(id).flops[static_cast<int>(prec)] =
        lin.flops_per_token_per_head_per_dk_dv * double(lin.head_dim) * lin.head_dim * double(H) * double(M);
    gemm(L, "kda_o_proj", KernelKind::gemm, M, h, HD, w, bytes_of((4 * HD + H) * h, wbits()));
    all_reduce(L, "attn_all_reduce", m_.deployment.attention_tensor_parallel);
  }

  void dense_mlp(const LayerShape& l) {
    const int L = l.index;
    const uint64_t I = m_.mlp.dense_intermediate_size / m_.deployment.dense_tensor_parallel, h = m_.hidden_size;
    const uint32_t w = weights(base_name(L, "mlp_w"), L, m_.weight_bytes(m_.layer_params(L).dense_mlp));
    gemm(L, "mlp_up", KernelKind::gemm, tokens(), 2 * I, h, w, 0);
    gemm(L, "mlp_down", KernelKind::gemm, tokens(), h, I, w, bytes_of(2 * I * h, wbits()));
    all_reduce(L, "mlp_all_reduce", m_.deployment.dense_tensor_parallel);
  }

  void moe(const LayerShape& l) {
    const int L = l.index;
    const auto& mlp = m_.mlp;
    const auto params = m_.layer_params(L);
    const uint64_t h = m_.hidden_size, M = tokens(), I = mlp.moe_intermediate_size;
    const uint32_t rw = weights(base_name(L, "router_w"), L, m_.weight_bytes(params.router));
    gemm(L, "router", KernelKind::gemm, M, mlp.routed_experts, h, rw, 0);
    // Data-parallel attention (its TP group smaller than the EP group): each rank holds its own
    // tokens, which DeepEP sends to the ranks of their experts and brings back. Otherwise every
    // rank of the EP group holds all the tokens, runs its experts on them, and one all-reduce
    // sums the experts' (and the TP-split shared experts') outputs.
    const auto& dep = m_.deployment;
    const bool dispatch = dep.expert_parallel > dep.attention_tensor_parallel;
    if (dispatch) expert_parallel(L, KernelKind::ep_dispatch);
    if (mlp.shared_experts > 0) {
      const uint64_t Is = uint64_t(mlp.shared_experts) * I / m_.deployment.dense_tensor_parallel;
      const uint32_t sw = weights(base_name(L, "shared_expert_w"), L, m_.weight_bytes(params.shared_experts));
      gemm(L, "shared_up", KernelKind::gemm, M, 2 * Is, h, sw, 0);
      gemm(L, "shared_down", KernelKind::gemm, M, h, Is, sw, bytes_of(2 * Is * h, wbits()));
    }
    const uint64_t El = m_.local_routed_experts();
    const uint32_t ew = weights(base_name(L, "experts_w"), L, m_.weight_bytes(params.routed_experts));
    const uint32_t touched = experts_touched(static_cast<uint32_t>(El), mlp.active_experts, mlp.routed_experts, M);
    // Which local experts receive tokens (seeded): only where their weights sit.
    Rng rng(sub_seed(mb_.p.seed, 0x6d6f65ull, uint64_t(L)));
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
    if (dispatch) expert_parallel(L, KernelKind::ep_combine);
    else all_reduce(L, "moe_all_reduce", std::max(dep.expert_parallel, dep.dense_tensor_parallel));
  }

  // DeepEP's dispatch (before the experts) or combine (after) of this rank's tokens.
  void expert_parallel(int L, KernelKind op) {
    ExpertParallelShape e;
    e.op = op;
    e.tokens = tokens();
    e.hidden = m_.hidden_size;
    e.topk = m_.mlp.active_experts;
    e.experts = m_.mlp.routed_experts;
    e.gpus = m_.deployment.expert_parallel;
    e.load_skew = m_.deployment.expert_load_skew;
    e.name = lname(L, op == KernelKind::ep_dispatch ? "ep_dispatch" : "ep_combine");
    e.layer = L;
    e.low_latency = m_.deployment.low_latency_ep(mb_.p.phase == Phase::decode);
    emit_deepep(b_, e, lim_, comm_buffers());
    note_activations();
  }

  // A grouped GEMM over the touched experts: each expert's `rows` tokens times its weights, as
  // DeepGEMM's grouped kernels run it (masked layout in decode, contiguous in prefill).
  void grouped_gemm(int L, const std::string& what, uint64_t rows, uint64_t N, uint64_t K, uint32_t w,
                    const std::vector<uint32_t>& experts, uint64_t expert_bytes, uint64_t part_off) {
    GemmProblem prob;
    prob.m = rows, prob.n = N, prob.k = K, prob.precision = m_.weight_precision;
    prob.groups = static_cast<uint32_t>(experts.size());
    prob.layout = mb_.p.phase == Phase::decode ? GemmLayout::grouped_masked : GemmLayout::grouped_contiguous;
    const GemmLaunch g = plan_gemm(prob, lim_);
    const uint64_t per_expert = ceil_div(rows, g.block_m) * ceil_div(N, g.block_n);
    const uint32_t id = b_.kernel(lname(L, what), KernelKind::moe_gemm, L, {per_expert * experts.size(), 1, 1},
                                  gemm_kernel_shape(g));
    // The Tensor Cores compute every tile of the touched experts (padded rows included).
    GemmLaunch tiles = g;
    tiles.tiles = per_expert * experts.size();
    gemm_flops(b_.k(id), tiles, K, m_.weight_precision);
    gemm_pipeline(b_.k(id), g, K);
    GemmOperands o;
    o.a_tensor = mb_.act_in;
    o.b_tensor = w;
    o.c_tensor = mb_.act_out;
    o.a_bits = o.b_bits = wbits();
    GemmTiling t = gemm_tiling(g);
    t.multicast = 1;  // grouped kernels multicast only inside one expert's tiles: kept simple here
    for (size_t i = 0; i < experts.size(); ++i) {
      o.b_base = experts[i] * expert_bytes + part_off;
      o.a_base = i * rows * bytes_of(K, wbits());
      o.c_base = i * rows * bytes_of(N, 16);
      gemm_accesses(b_, id, i * per_expert, rows, N, K, t, o);
    }
    mb_.act_bytes = std::max({mb_.act_bytes, bytes_of(experts.size() * rows * K, 16), bytes_of(experts.size() * rows * N, 16)});
  }

  void lm_head(const std::string& name = "lm_head") {
    // Decode scores every new token (MTP drafts are verified); a prefill chunk samples its last token.
    const uint64_t M = mb_.p.phase == Phase::decode ? tokens() : mb_.p.batch;
    gemm(-1, "lm_head", KernelKind::gemm, M, m_.vocab_size / m_.deployment.attention_tensor_parallel, m_.hidden_size, lm_w_, 0);
    b_.k(static_cast<uint32_t>(b_.t.kernels.size() - 1)).name = name == "lm_head" ? mb_.prefix + name : name;
    // The vocabulary is split over the attention TP group: its logits (FP32) are gathered.
    const uint32_t tp = m_.deployment.attention_tensor_parallel;
    if (tp > 1) {
      CollectiveShape c;
      c.op = KernelKind::all_gather;
      c.bytes = M * m_.vocab_size * 4;
      c.gpus = tp;
      c.name = name == "lm_head" ? mb_.prefix + "logits_all_gather" : name + "_all_gather";
      emit_collective(b_, c, lim_.fabric, comm_buffers());
      note_activations();
    }
  }

  void finish_metadata() {
    auto& md = b_.t.metadata;
    md["source"] = "emulated";
    md["generator"] = kGeneratorVersion;
    md["workload"] = m_.name;
    md["workload_config"] = m_.resolved;
    md["step"] = step_.to_json();
    md["seed"] = step_.seed;
    if (m_.deployment.two_batch_overlap) md["two_batch_overlap"] = {{"micro_batches", parts_.size()}, {"split", split_}};
    md.update(m_.describe());
  }
};

}  // namespace

uint32_t experts_touched(uint32_t local, uint32_t active, uint32_t total, uint64_t tokens) {
  const double miss = std::pow(1.0 - double(active) / total, double(tokens));
  const double e = std::round(local * (1.0 - miss));
  return static_cast<uint32_t>(std::clamp(e, 1.0, double(local)));
}

TraceData emulate_step(const ModelShape& shape, const StepParams& params, const LaunchLimits& limits) {
  // With MTP drafting on, a decode step verifies the drafts: 1 + mtp_layers tokens per sequence.
  StepParams p = params;
  if (shape.mtp.enabled && p.phase == Phase::decode) {
    const uint32_t verify = 1 + shape.mtp.layers;
    if (p.queries != 1 && p.queries != verify)
      throw std::invalid_argument("step.queries = " + std::to_string(p.queries) + ": with MTP drafting on (workload mtp.enabled) a decode step verifies " +
                                  std::to_string(verify) + " tokens a sequence (1 + model.mtp_layers)");
    p.queries = verify;
  }
  return StepEmulator(shape, p, limits).run();
}

}  // namespace indexsim::trace
