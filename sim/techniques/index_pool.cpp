// SPDX-License-Identifier: Apache-2.0
// IndexPool: gated weighted pooling of `ratio` indexer entries into one,
// V = Σ w_i V_i / Σ w_i, w_i = sigmoid(W [h_t; V_i] + b) (or softmax(W V_i + ape_i)).
//
// Axis `tokens` (the public models' reading: GLM-5.3-Flash index_kpool, DeepSeek-V4) pools the keys
// of consecutive tokens: the stored cache shrinks to complete pools + the raw tail + the unpooled
// recent window, top-k selects pooled entries that expand to token ranges (the generator does the
// expansion and always selects the tail). Axis `vectors` (the seeds' reading) pools the
// `vectors_per_token` vectors of one token `ratio` to one (4 -> 1, 4 -> 2): the stored entry, and
// so the scan, shrinks by the ratio; it needs a model that stores several vectors a token.
// The gate runs as its own kernel (its GEMV and the weighted sum), on its own stream if asked; its
// parameters are a weights tensor per layer. Along tokens it pools what the append wrote; along
// vectors it reads each new token's h_t and raw vectors and the append writes the pooled ones.
// `precision` sets the gate's parameter bytes and its math (fp16 on the tensor pipe, fp32 on the
// CUDA cores); `update_every` N recomputes the gate logits and reads its weights every N steps,
// which one step carries as 1/N of them.
#include <algorithm>
#include <map>

#include "sim/techniques/technique.hpp"

namespace indexsim::sim {

namespace {

using config::Rule;

class IndexPool : public Technique {
 public:
  explicit IndexPool(const config::Node& n) : node_(n) {
    ratio_ = n.req<uint32_t>("ratio", Rule::range(2, 4));
    axis_ = n.req<std::string>("axis", Rule::choice({"tokens", "vectors"}));
    gate_ = n.opt<std::string>("gate", "sigmoid", Rule::choice({"sigmoid", "softmax"}));
    update_every_ = n.opt<uint32_t>("update_every", 1, Rule::range(1, 1e6));
    precision_ = n.opt<std::string>("precision", "fp16", Rule::choice({"fp16", "fp32"}));
    own_stream_ = n.opt<bool>("own_stream", true);
    recent_full_ = n.opt<uint32_t>("recent_full", 0, Rule::range(0, 1u << 24));
    if (axis_ == "vectors" && recent_full_ > 0)
      n.fail("recent_full", std::to_string(recent_full_), "applies to axis tokens (a recent window of unpooled tokens); 0 along vectors");
  }

  void reshape(trace::ModelShape& m) const override {
    hidden_ = m.hidden_size;
    dim_ = m.indexer.head_dim;
    elem_bytes_ = m.indexer.elem_bytes;
    if (axis_ == "vectors") {
      const uint32_t v = m.indexer.vectors_per_token;
      if (v == 1)
        node_.fail("axis", axis_, "workload '" + m.name + "' stores one indexer vector per token; pooling along "
                   "vectors needs several (indexer.vectors_per_token, e.g. glm-5.3-flash-4v; or use axis: tokens)");
      if (v % ratio_ != 0)
        node_.fail("ratio", std::to_string(ratio_), "must divide the vectors per token of workload '" + m.name +
                   "' (indexer.vectors_per_token " + std::to_string(v) + ")");
      raw_vectors_ = v;
      m.indexer.vectors_per_token = v / ratio_;
      return;
    }
    if (m.indexer.pool_tokens > 1)
      node_.fail("ratio", std::to_string(ratio_), "workload '" + m.name + "' already pools its indexer keys (" +
                 std::to_string(m.indexer.pool_tokens) + " tokens per entry)");
    if (m.indexer.topk % ratio_ != 0)
      node_.fail("ratio", std::to_string(ratio_), "must divide the indexer top-k (" + std::to_string(m.indexer.topk) + ")");
    m.indexer.pool_tokens = ratio_;
    m.indexer.recent_full_tokens = recent_full_;
  }

  // Gate parameters per layer: sigmoid gate W over [h_t; V] and b; softmax gate W over V, b and one
  // position bias per pooled slot.
  uint64_t gate_params() const {
    return gate_ == "sigmoid" ? uint64_t(hidden_) + dim_ + 1 : uint64_t(dim_) + 1 + ratio_;
  }
  uint32_t param_bytes() const { return precision_ == "fp16" ? 2 : 4; }

  void transform(Workload& w, TechniqueContext& ctx) const override {
    auto& rep = (*ctx.report)["index_pool"];
    rep["ratio"] = ratio_;
    rep["gate_params_per_layer"] = gate_params();
    rep["gate_bytes_per_layer"] = gate_params() * param_bytes();
    rep["axis"] = axis_;
    // New tokens a sequence appends this step (1 in decode, a chunk in prefill).
    const double tokens = double(new_tokens_per_sequence(w.metadata()));
    const bool vectors = axis_ == "vectors";
    // Per new token: the gate logits (one a pooled slot: a dot over its inputs) every update_every
    // steps, and the weighted sum (2 FLOPs a dimension of each pooled input).
    const double slots = vectors ? double(raw_vectors_) : 1.0;
    const double gate_flops = slots * 2.0 * double(gate_params()) / update_every_;
    const double sum_flops = 2.0 * double(dim_) * (vectors ? double(raw_vectors_) : 1.0);
    const uint64_t gate_read = std::max<uint64_t>(1, gate_params() * param_bytes() / update_every_);
    rep["gate_bytes_read_per_step"] = gate_read;
    // Its own stream: 2, beside IndexShare's prefetch on 1 (a split step: one a micro-batch).
    const uint32_t own = side_stream(w, 2);
    std::map<int, uint32_t> gate_of;  // a layer's gate weights, one for both micro-batches of a split step
    const size_t n = w.kernels().size();
    for (size_t v = 0; v < n; ++v) {
      const auto& k = w.kernels()[v];
      if (k.removed || k.rec.kind != trace::KernelKind::index_append) continue;
      const int L = k.rec.layer;
      auto [at, fresh] = gate_of.try_emplace(L, 0);
      if (fresh)
        at->second = w.add_tensor({0, "L" + std::to_string(L) + ".pool_gate", trace::TensorClass::weights, L,
                                   gate_params() * param_bytes()});
      const uint32_t gate_w = at->second;
      const double seqs = k.rec.grid[0];  // the append kernel has one CTA per sequence
      const auto append_preds = w.predecessors(v);
      const uint32_t mb = trace::micro_batch_of(k.rec.name);
      trace::KernelRecord r;
      r.name = name_beside(k.rec, "pool_gate");
      r.kind = trace::KernelKind::pool_gate;
      r.layer = L;
      r.stream = own_stream_ ? own + mb : k.rec.stream;
      r.grid = {uint32_t(seqs), 1, 1};
      r.block = {128, 1, 1};
      r.regs_per_thread = 64;
      r.flops[int(precision_ == "fp16" ? trace::Precision::fp16 : trace::Precision::simt)] =
          seqs * tokens * (gate_flops + sum_flops);
      std::vector<trace::AccessRecord> acc;
      trace::AccessRecord a;
      a.cta_first = 0;
      a.cta_count = r.grid[0];
      a.tensor = gate_w;
      a.elem_bytes = uint32_t(gate_read);
      a.count = 1;
      a.stride_bytes = a.elem_bytes;
      acc.push_back(a);
      if (vectors) {
        // Each new token's h_t (bf16) and its raw vectors, as the k projection left them.
        const uint64_t per_token = uint64_t(hidden_) * 2 + uint64_t(raw_vectors_) * dim_ * elem_bytes_;
        const uint32_t in = w.add_tensor({0, name_beside(k.rec, "pool_inputs"), trace::TensorClass::activations, L,
                                          uint64_t(seqs * tokens) * per_token});
        trace::AccessRecord x = a;
        x.tensor = in;
        x.elem_bytes = uint32_t(uint64_t(tokens) * per_token);
        x.cta_stride_bytes = int64_t(x.elem_bytes);
        x.stride_bytes = x.elem_bytes;
        acc.push_back(x);
      }
      const size_t g = w.add_kernel(r, std::move(acc));
      if (vectors) {
        // The append writes the pooled vectors: the gate comes between it and what it waited for.
        for (size_t p : append_preds) w.add_edge(p, g);
        w.add_edge(g, v);
      } else {
        w.add_edge(v, g);  // pools what the append wrote
        if (!own_stream_)
          for (size_t s : w.successors(v))
            if (s != g) w.add_edge(g, s);
      }
    }
  }

 private:
  config::Node node_;
  uint32_t ratio_ = 4, update_every_ = 1, recent_full_ = 0;
  std::string axis_, gate_, precision_;
  bool own_stream_ = true;
  mutable uint32_t hidden_ = 0, dim_ = 0, elem_bytes_ = 1, raw_vectors_ = 1;
};

}  // namespace

INDEXSIM_REGISTER(TechniqueRegistry, "technique", "index_pool",
                  [](const config::Node& n) { return std::make_unique<IndexPool>(n); });

}  // namespace indexsim::sim
