// SPDX-License-Identifier: Apache-2.0
#include "traces/generators/model_shape.hpp"

#include <algorithm>
#include <optional>

namespace indexsim::trace {

using config::Node;
using config::Rule;

namespace {
constexpr const char* kAttentionNames[] = {"dsa", "linear"};
constexpr const char* kIndexerNames[] = {"none", "full", "shared"};
constexpr const char* kMlpNames[] = {"dense", "moe"};

Precision read_precision(const Node& n, const std::string& key, const std::vector<std::string>& allowed) {
  const std::string s = n.req<std::string>(key, Rule::choice(allowed));
  Precision p{};
  precision_from_string(s, p);
  return p;
}

KernelShape read_kernel_shape(const Node& n) {
  KernelShape k;
  k.threads = n.req<uint32_t>("threads", Rule::range(32, 1024));
  k.smem_bytes = static_cast<uint32_t>(n.req<double>("smem_KiB", Rule::non_negative()) * 1024);
  k.regs_per_thread = n.req<uint32_t>("regs_per_thread", Rule::range(1, 255));
  return k;
}

// A positive count that `divisor` splits evenly: one GPU's share must be a whole number.
void check_divides(const Node& n, const std::string& key, uint64_t value, uint64_t divisor, const std::string& what) {
  if (divisor == 0 || value % divisor != 0)
    n.fail(key, std::to_string(value), "must be divisible by " + what + " (" + std::to_string(divisor) + ")");
}
}  // namespace

const char* to_string(AttentionKind k) { return kAttentionNames[static_cast<int>(k)]; }
const char* to_string(IndexerMode m) { return kIndexerNames[static_cast<int>(m)]; }
const char* to_string(MlpKind k) { return kMlpNames[static_cast<int>(k)]; }

uint32_t precision_bits(Precision p) {
  switch (p) {
    case Precision::fp32: case Precision::tf32: case Precision::simt: return 32;
    case Precision::bf16: case Precision::fp16: return 16;
    case Precision::fp8: return 8;
    case Precision::fp4: return 4;
  }
  return 32;
}

bool precision_from_string(const std::string& s, Precision& out) {
  for (int i = 0; i < kPrecisionCount; ++i)
    if (s == to_string(static_cast<Precision>(i))) {
      out = static_cast<Precision>(i);
      return true;
    }
  return false;
}

ModelShape load_model_shape(const Node& root) {
  ModelShape m;
  m.name = root.req<std::string>("name");
  m.description = root.opt<std::string>("description", "");

  const Node model = root.child("model");
  m.hidden_size = model.req<uint32_t>("hidden_size", Rule::positive());
  m.vocab_size = model.req<uint32_t>("vocab_size", Rule::positive());
  m.num_layers = model.req<uint32_t>("num_layers", Rule::range(1, 1024));
  m.max_position_embeddings = model.opt<uint64_t>("max_position_embeddings", 0, Rule::range(0, 1e12));
  m.mtp.layers = model.opt<uint32_t>("mtp_layers", 0, Rule::range(0, 8));
  m.weight_precision = read_precision(model, "weight_precision", {"bf16", "fp16", "fp8", "fp4"});

  const Node att = root.child("attention");
  m.mla.num_heads = att.req<uint32_t>("num_heads", Rule::positive());
  m.mla.q_lora_rank = att.req<uint32_t>("q_lora_rank", Rule::positive());
  m.mla.kv_lora_rank = att.req<uint32_t>("kv_lora_rank", Rule::positive());
  m.mla.qk_nope_head_dim = att.req<uint32_t>("qk_nope_head_dim", Rule::positive());
  m.mla.qk_rope_head_dim = att.req<uint32_t>("qk_rope_head_dim", Rule::non_negative());
  m.mla.v_head_dim = att.req<uint32_t>("v_head_dim", Rule::positive());
  m.mla.kv_bytes_per_token = att.req<uint32_t>("kv_bytes_per_token", Rule::positive());
  m.mla.compute_precision = read_precision(att, "compute_precision", {"bf16", "fp16", "fp8"});

  const Node idx = root.child("indexer");
  m.indexer.num_heads = idx.req<uint32_t>("num_heads", Rule::positive());
  m.indexer.head_dim = idx.req<uint32_t>("head_dim", Rule::positive());
  m.indexer.topk = idx.req<uint32_t>("topk", Rule::positive());
  m.indexer.elem_bytes = idx.req<uint32_t>("elem_bytes", Rule::range(1, 4));
  m.indexer.scale_bytes_per_entry = idx.req<uint32_t>("scale_bytes_per_entry", Rule::non_negative());
  m.indexer.pool_tokens = idx.req<uint32_t>("pool_tokens", Rule::range(1, 128));
  // Read only where a file gives it, so that the shipped one-vector models resolve as before.
  if (idx.has("vectors_per_token")) m.indexer.vectors_per_token = idx.req<uint32_t>("vectors_per_token", Rule::range(1, 64));
  m.indexer.score_precision = read_precision(idx, "score_precision", {"fp32", "bf16", "fp16", "fp8", "fp4"});
  m.indexer.heads_split = idx.req<std::string>("heads", Rule::choice({"replicated", "split"})) == "split";
  if (m.indexer.topk % m.indexer.pool_tokens != 0)
    idx.fail("topk", std::to_string(m.indexer.topk),
             "must be a multiple of pool_tokens (" + std::to_string(m.indexer.pool_tokens) + ")");

  const Node mlp = root.child("mlp");
  m.mlp.dense_intermediate_size = mlp.req<uint32_t>("dense_intermediate_size", Rule::positive());
  m.mlp.moe_intermediate_size = mlp.req<uint32_t>("moe_intermediate_size", Rule::positive());
  m.mlp.routed_experts = mlp.req<uint32_t>("routed_experts", Rule::positive());
  m.mlp.active_experts = mlp.req<uint32_t>("active_experts", Rule::positive());
  m.mlp.shared_experts = mlp.req<uint32_t>("shared_experts", Rule::non_negative());
  if (m.mlp.active_experts > m.mlp.routed_experts)
    mlp.fail("active_experts", std::to_string(m.mlp.active_experts), "must be <= routed_experts");

  const Node dep = root.child("deployment");
  m.deployment.gpus = dep.req<uint32_t>("gpus", Rule::positive());
  m.deployment.attention_tensor_parallel = dep.req<uint32_t>("attention_tensor_parallel", Rule::power_of_two());
  m.deployment.dense_tensor_parallel = dep.req<uint32_t>("dense_tensor_parallel", Rule::power_of_two());
  m.deployment.expert_parallel = dep.req<uint32_t>("expert_parallel", Rule::power_of_two());
  m.deployment.expert_load_skew = dep.opt<double>("expert_load_skew", 1.0, Rule::range(1, 1024));
  const std::string ep_kernels =
      dep.opt<std::string>("expert_parallel_kernels", "by_phase", Rule::choice({"normal", "low_latency", "by_phase"}));
  m.deployment.expert_parallel_kernels = ep_kernels == "normal"        ? EpKernels::normal
                                         : ep_kernels == "low_latency" ? EpKernels::low_latency
                                                                       : EpKernels::by_phase;
  m.deployment.two_batch_overlap = dep.opt<bool>("two_batch_overlap", false);
  for (const char* k : {"attention_tensor_parallel", "dense_tensor_parallel", "expert_parallel"}) {
    const uint32_t v = dep.req<uint32_t>(k, Rule::power_of_two());
    if (v > m.deployment.gpus) dep.fail(k, std::to_string(v), "must be <= gpus (" + std::to_string(m.deployment.gpus) + ")");
  }
  const uint32_t tp = m.deployment.attention_tensor_parallel;
  check_divides(att, "num_heads", m.mla.num_heads, tp, "deployment.attention_tensor_parallel");
  if (m.indexer.heads_split) check_divides(idx, "num_heads", m.indexer.num_heads, tp, "deployment.attention_tensor_parallel");
  check_divides(mlp, "routed_experts", m.mlp.routed_experts, m.deployment.expert_parallel, "deployment.expert_parallel");
  check_divides(mlp, "dense_intermediate_size", m.mlp.dense_intermediate_size, m.deployment.dense_tensor_parallel,
                "deployment.dense_tensor_parallel");
  check_divides(mlp, "moe_intermediate_size", m.mlp.moe_intermediate_size, m.deployment.dense_tensor_parallel,
                "deployment.dense_tensor_parallel");

  // Layer rules: each sets some of a range's fields; later rules override earlier ones.
  struct Partial {
    std::optional<AttentionKind> attention;
    std::optional<IndexerMode> indexer;
    std::optional<MlpKind> mlp;
  };
  std::vector<Partial> partial(m.num_layers);
  for (const Node& rule : root.children("layers")) {
    const uint32_t first = rule.req<uint32_t>("first", Rule::range(0, m.num_layers - 1));
    const uint32_t last = rule.req<uint32_t>("last", Rule::range(first, m.num_layers - 1));
    const uint32_t every = rule.opt<uint32_t>("every", 1, Rule::positive());
    std::optional<AttentionKind> a;
    std::optional<IndexerMode> ix;
    std::optional<MlpKind> mk;
    if (rule.has("attention"))
      a = rule.req<std::string>("attention", Rule::choice({"dsa", "linear"})) == "dsa" ? AttentionKind::dsa
                                                                                       : AttentionKind::linear;
    if (rule.has("indexer")) {
      const std::string s = rule.req<std::string>("indexer", Rule::choice({"full", "shared"}));
      ix = s == "full" ? IndexerMode::full : IndexerMode::shared;
    }
    if (rule.has("mlp"))
      mk = rule.req<std::string>("mlp", Rule::choice({"dense", "moe"})) == "dense" ? MlpKind::dense : MlpKind::moe;
    if (!a && !ix && !mk) rule.fail("", "", "a layer rule must set at least one of attention, indexer, mlp");
    for (uint32_t l = first; l <= last; l += every) {
      if (a) partial[l].attention = a;
      if (ix) partial[l].indexer = ix;
      if (mk) partial[l].mlp = mk;
    }
  }
  int last_full = -1;
  for (uint32_t l = 0; l < m.num_layers; ++l) {
    const Partial& p = partial[l];
    LayerShape s;
    s.index = static_cast<int>(l);
    const std::string where = "layer " + std::to_string(l);
    if (!p.attention || !p.mlp)
      root.fail("layers", where, "the layer rules leave this layer's attention or mlp unset");
    s.attention = *p.attention;
    s.mlp = *p.mlp;
    if (s.attention == AttentionKind::dsa) {
      if (!p.indexer) root.fail("layers", where, "a dsa layer needs indexer: full or shared");
      s.indexer = *p.indexer;
      if (s.indexer == IndexerMode::full) last_full = s.index;
      if (last_full < 0) root.fail("layers", where, "a shared-indexer layer needs an earlier full layer");
      s.topk_source = last_full;
    } else {
      if (p.indexer) root.fail("layers", where, "a linear-attention layer has no indexer");
      s.indexer = IndexerMode::none;
    }
    m.layers.push_back(s);
  }
  // The MTP modules' layers, when drafting is on: each a DSA layer with its own indexer and the
  // model's routed MLP (DeepSeek-V3's MTP module is one more full transformer block).
  if (root.has("mtp")) {
    const Node mtp = root.child("mtp");
    m.mtp.enabled = mtp.opt<bool>("enabled", false);
    m.mtp.acceptance_rate = mtp.req<double>("acceptance_rate", Rule::range(0, 1));
    if (m.mtp.enabled && m.mtp.layers == 0)
      mtp.fail("enabled", "true", "the model has no MTP module (model.mtp_layers is 0)");
  }
  if (m.mtp.enabled)
    for (uint32_t k = 0; k < m.mtp.layers; ++k) {
      LayerShape s;
      s.index = static_cast<int>(m.layers.size());
      s.attention = AttentionKind::dsa;
      s.indexer = IndexerMode::full;
      s.topk_source = s.index;
      s.mlp = std::any_of(m.layers.begin(), m.layers.end(), [](const LayerShape& l) { return l.mlp == MlpKind::moe; })
                  ? MlpKind::moe
                  : MlpKind::dense;
      s.mtp = true;
      m.layers.push_back(s);
    }

  if (m.count_layers(AttentionKind::linear) > 0) {
    const Node lin = root.child("linear_attention");
    m.linear.num_heads = lin.req<uint32_t>("num_heads", Rule::positive());
    m.linear.head_dim = lin.req<uint32_t>("head_dim", Rule::positive());
    m.linear.state_elem_bytes = lin.req<uint32_t>("state_elem_bytes", Rule::range(1, 8));
    m.linear.flops_per_token_per_head_per_dk_dv =
        lin.req<double>("flops_per_token_per_head_per_dk_dv", Rule::positive());
    check_divides(lin, "num_heads", m.linear.num_heads, tp, "deployment.attention_tensor_parallel");
  } else if (root.has("linear_attention")) {
    root.fail("linear_attention", "", "given, but no layer is linear");
  }

  const Node sel = root.child("topk_selection");
  m.selection.sink_tokens = sel.req<uint32_t>("sink_tokens", Rule::non_negative());
  m.selection.recent_tokens = sel.req<uint32_t>("recent_tokens", Rule::non_negative());
  m.selection.cluster_mean_tokens = sel.req<double>("cluster_mean_tokens", Rule::range(1, 1e6));
  if (m.selection.sink_tokens + m.selection.recent_tokens > m.indexer.topk)
    sel.fail("recent_tokens", std::to_string(m.selection.recent_tokens), "sink_tokens + recent_tokens must be <= indexer.topk");

  const Node ker = root.child("kernels");
  const Node is = ker.child("indexer_score");
  m.kernels.indexer_tile_tokens = is.req<uint32_t>("tile_tokens", Rule::power_of_two());
  m.kernels.indexer_q_tile_tokens = is.req<uint32_t>("q_tile_tokens", Rule::power_of_two());
  m.kernels.indexer_score = read_kernel_shape(is);
  m.kernels.linear_state = read_kernel_shape(ker.child("linear_state"));
  m.kernels.elementwise = read_kernel_shape(ker.child("elementwise"));
  return m;
}

ModelShape load_model_shape_file(const std::string& file, const std::vector<std::string>& overrides) {
  auto doc = config::Document::load_file(file);
  for (const auto& o : overrides) doc->set(o);
  ModelShape m = load_model_shape(doc->root());
  doc->check_unused();
  m.resolved = doc->resolved();
  return m;
}

double MtpShape::tokens_per_step() const {
  if (!enabled) return 1;
  double t = 1, p = 1;
  for (uint32_t k = 0; k < layers; ++k) t += (p *= acceptance_rate);
  return t;
}

uint32_t ModelShape::local_index_heads() const {
  return indexer.heads_split ? indexer.num_heads / deployment.attention_tensor_parallel : indexer.num_heads;
}

int ModelShape::count_layers(AttentionKind a) const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(), [&](const LayerShape& l) { return l.attention == a; }));
}

int ModelShape::count_indexer_layers() const {
  return static_cast<int>(
      std::count_if(layers.begin(), layers.end(), [](const LayerShape& l) { return l.indexer == IndexerMode::full; }));
}

double ModelShape::indexer_bytes_per_token(int layer) const {
  return runs_indexer(layer) ? double(indexer.bytes_per_entry()) / indexer.pool_tokens : 0.0;
}

uint64_t ModelShape::kv_bytes_per_token(int layer) const {
  return layers.at(layer).attention == AttentionKind::dsa ? mla.kv_bytes_per_token : 0;
}

uint64_t ModelShape::indexer_entries(uint64_t context) const {
  // The newest recent_full_tokens stay one entry per token; older tokens form complete pools plus a
  // raw tail of the last incomplete pool.
  const uint64_t recent = indexer.pool_tokens > 1 ? std::min<uint64_t>(context, indexer.recent_full_tokens) : 0;
  const uint64_t older = context - recent;
  return recent + older / indexer.pool_tokens + older % indexer.pool_tokens;
}

uint64_t ModelShape::linear_state_bytes_per_sequence(int layer) const {
  if (layers.at(layer).attention != AttentionKind::linear) return 0;
  return uint64_t(local_linear_heads()) * linear.head_dim * linear.head_dim * linear.state_elem_bytes;
}

ModelShape::LayerParams ModelShape::layer_params(int layer) const {
  const LayerShape& l = layers.at(layer);
  LayerParams p;
  const uint64_t h = hidden_size;
  if (l.attention == AttentionKind::dsa) {
    const uint64_t H = local_heads();
    // q_a and kv_a (latent + RoPE key) read the whole hidden state and are replicated on TP ranks;
    // q_b, kv_b (absorbed into the query and output) and o are split by heads.
    p.attention = h * (mla.q_lora_rank + mla.kv_lora_rank + mla.qk_rope_head_dim) +
                  uint64_t(mla.q_lora_rank) * H * (mla.qk_nope_head_dim + mla.qk_rope_head_dim) +
                  uint64_t(mla.kv_lora_rank) * H * (mla.qk_nope_head_dim + mla.v_head_dim) + H * mla.v_head_dim * h;
    if (l.indexer == IndexerMode::full) {
      const uint64_t IH = local_index_heads();
      // wq_b (from the query latent), wk (one key per token) and weights_proj (one weight per head).
      p.indexer = uint64_t(mla.q_lora_rank) * IH * indexer.head_dim + h * indexer.entry_dim() + h * IH;
    }
  } else {
    const uint64_t HD = uint64_t(local_linear_heads()) * linear.head_dim;
    // q, k, v and the output gate from the hidden state, one beta per head, and the output projection.
    p.attention = 4 * h * HD + h * local_linear_heads() + HD * h;
  }
  if (l.mlp == MlpKind::dense) {
    p.dense_mlp = 3 * h * mlp.dense_intermediate_size / deployment.dense_tensor_parallel;
  } else {
    p.router = h * mlp.routed_experts;
    p.shared_experts = uint64_t(mlp.shared_experts) * 3 * h * mlp.moe_intermediate_size / deployment.dense_tensor_parallel;
    p.routed_experts = uint64_t(local_routed_experts()) * routed_expert_params();
  }
  if (l.mtp) p.mtp_proj = 2 * h * h;
  return p;
}

nlohmann::json ModelShape::describe() const {
  nlohmann::json d;
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& l : layers)
    kinds.push_back(std::string(to_string(l.attention)) + (l.attention == AttentionKind::dsa ? std::string("/") + to_string(l.indexer) : "") +
                    "/" + to_string(l.mlp));
  d["layer_kinds"] = kinds;
  const auto params = parameters();
  d["parameters"] = {{"total", params.total},
                     {"active", params.active},
                     {"counts", std::string("embedding, LM head, every layer's attention, indexer and MLP (whole model); ") +
                                (mtp.enabled ? "the MTP layers with their eh_proj; " : "no MTP layer; ") +
                                "no vision tower, mHC mixing, norms or biases"}};
  d["per_gpu"] = {{"heads", local_heads()},
                  {"index_heads", local_index_heads()},
                  {"routed_experts", local_routed_experts()},
                  {"kv_cache", "replicated across attention TP (one latent per token)"},
                  {"indexer_cache", "replicated across attention TP (one key per token)"},
                  {"linear_state", "split with the heads"}};
  return d;
}

ModelShape::ParameterCount ModelShape::parameters() const {
  ModelShape whole = *this;
  whole.deployment = DeploymentShape{};  // one GPU holding everything: the per-GPU counts are the model's
  ParameterCount c;
  c.total = c.active = whole.embedding_params();
  for (const auto& l : whole.layers) {
    const LayerParams p = whole.layer_params(l.index);
    c.total += p.total();
    c.active += p.total() - p.routed_experts + (p.routed_experts ? uint64_t(mlp.active_experts) * routed_expert_params() : 0);
  }
  return c;
}

uint64_t ModelShape::embedding_params() const {
  return 2ull * vocab_size * hidden_size / deployment.attention_tensor_parallel;
}

uint64_t ModelShape::weight_bytes(uint64_t params) const {
  return (params * precision_bits(weight_precision) + 7) / 8;
}

std::map<TensorClass, uint64_t> ModelShape::footprint(uint64_t context, uint64_t batch) const {
  std::map<TensorClass, uint64_t> f;
  uint64_t params = embedding_params();
  for (const auto& l : layers) {
    params += layer_params(l.index).total();
    f[TensorClass::kv_cache] += kv_bytes_per_token(l.index) * context * batch;
    if (runs_indexer(l.index)) f[TensorClass::indexer_cache] += indexer_entries(context) * indexer.bytes_per_entry() * batch;
    f[TensorClass::linear_state] += linear_state_bytes_per_sequence(l.index) * batch;
  }
  f[TensorClass::weights] = weight_bytes(params);
  return f;
}

}  // namespace indexsim::trace
