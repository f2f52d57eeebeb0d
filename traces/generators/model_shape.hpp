// SPDX-License-Identifier: Apache-2.0
// The shape of a sparse-attention model and its deployment, loaded from configs/workloads/*.yaml.
//
// Everything here is ONE GPU's share: heads, experts and weights are divided by the deployment's
// parallel degrees, and the caches are sized as that GPU holds them. The MLA latent KV cache and the
// indexer keys are per token, not per head, so attention tensor parallelism replicates them on every
// rank; the linear-attention state is per head, so it is split with the heads.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/params.hpp"
#include "traces/records.hpp"

namespace indexsim::trace {

enum class AttentionKind { dsa, linear };
enum class IndexerMode { none, full, shared };  // none: linear layers
enum class MlpKind { dense, moe };
const char* to_string(AttentionKind k);
const char* to_string(IndexerMode m);
const char* to_string(MlpKind k);

struct LayerShape {
  int index = 0;
  AttentionKind attention = AttentionKind::dsa;
  IndexerMode indexer = IndexerMode::none;
  MlpKind mlp = MlpKind::dense;
  int topk_source = -1;  // DSA layers: the full layer whose top-k this layer uses (itself if full)
  bool mtp = false;      // a multi-token-prediction module's layer, after the model's own (see MtpShape)
};

struct MlaShape {
  uint32_t num_heads = 0, q_lora_rank = 0, kv_lora_rank = 0;
  uint32_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  uint32_t kv_bytes_per_token = 0;  // one token's cached latent + RoPE key (+ scales), one layer
  Precision compute_precision = Precision::bf16;
};

struct IndexerShape {
  uint32_t num_heads = 0, head_dim = 0, topk = 0;
  uint32_t elem_bytes = 0;             // per stored key element (FP8: 1)
  uint32_t scale_bytes_per_entry = 0;  // quantisation scale stored with each key
  uint32_t pool_tokens = 1;            // consecutive tokens pooled into one stored key (1: none)
  // Indexer vectors stored per token, each head_dim wide (the seeds' IndexPool reading: four
  // 64-dimensional vectors a token); a query is dotted with each. IndexPool along `vectors` lowers it.
  uint32_t vectors_per_token = 1;
  Precision score_precision = Precision::fp8;
  bool heads_split = false;            // index heads divided across attention TP (else replicated)
  // Set by techniques, not by workload files: stored element bytes are scaled by storage_ratio
  // (FP4 elements: 0.5 of a byte; IndexShare's hashed storage: 1/3), and the newest
  // recent_full_tokens tokens keep unpooled entries (IndexPool's full-resolution recent window).
  double storage_ratio = 1.0;
  uint32_t recent_full_tokens = 0;
  uint32_t entry_dim() const { return head_dim * vectors_per_token; }  // elements of one stored entry
  uint32_t bytes_per_entry() const {
    return uint32_t(std::ceil(double(entry_dim()) * elem_bytes * storage_ratio - 1e-9)) + scale_bytes_per_entry;
  }
};

struct LinearShape {  // linear attention (KDA / gated delta rule) layers
  uint32_t num_heads = 0, head_dim = 0;
  uint32_t state_elem_bytes = 0;  // recurrent state element (fp32: 4)
  double flops_per_token_per_head_per_dk_dv = 0;  // state-update arithmetic, in units of dk·dv
};

struct MlpShape {
  uint32_t dense_intermediate_size = 0;
  uint32_t moe_intermediate_size = 0;
  uint32_t routed_experts = 0, active_experts = 0, shared_experts = 0;
};

// Multi-token prediction (DeepSeek-V3 §2.2, arXiv 2412.19437): `layers` modules after the model,
// each an embedding-and-hidden projection (eh_proj, 2h -> h) and one more transformer layer, sharing
// the embedding and the LM head. Serving uses them as a speculative drafter: with `enabled`, a decode
// step verifies 1 + layers tokens per sequence (the main model) and drafts the next ones (each
// module once); a step emits 1 + p + p^2 + ... + p^layers tokens, p the acceptance rate of a draft.
struct MtpShape {
  uint32_t layers = 0;          // model.mtp_layers: num_nextn_predict_layers of the published config
  bool enabled = false;         // mtp.enabled
  double acceptance_rate = 0;   // mtp.acceptance_rate
  double tokens_per_step() const;
};

// Which of DeepEP's kernels carry the expert-parallel dispatch and combine: its normal kernels, its
// low-latency ones, or, as DeepEP is meant to be used, low latency in decode and normal in prefill.
enum class EpKernels : uint8_t { normal, low_latency, by_phase };

struct DeploymentShape {
  uint32_t gpus = 1;
  uint32_t attention_tensor_parallel = 1;  // MLA heads, linear heads, output projection
  uint32_t dense_tensor_parallel = 1;      // dense MLP and shared experts
  uint32_t expert_parallel = 1;            // routed experts
  double expert_load_skew = 1.0;           // the busiest rank receives this multiple of the mean tokens
  EpKernels expert_parallel_kernels = EpKernels::by_phase;
  // Two-batch overlap (SGLang's --enable-two-batch-overlap): the step runs as two micro-batches on
  // two streams, so that one's communication overlaps the other's compute (traces/generators/emulate.cpp).
  bool two_batch_overlap = false;
  bool low_latency_ep(bool decode) const {
    return expert_parallel_kernels == EpKernels::low_latency || (expert_parallel_kernels == EpKernels::by_phase && decode);
  }
};

struct KernelShape {  // launch geometry of one emulated kernel class
  uint32_t threads = 128, smem_bytes = 0, regs_per_thread = 0;
};
// Kernel classes whose launch the workload config gives. GEMMs (traces/generators/launch.hpp),
// top-k and sparse attention (traces/kernel_geometry.hpp) are shaped from the device instead.
struct KernelTiling {
  KernelShape indexer_score, linear_state, elementwise;
  uint32_t indexer_tile_tokens = 64;                         // cache entries scored by one CTA
  uint32_t indexer_q_tile_tokens = 64;                       // queries that share one cache pass
};

struct TopkSelection {  // the locality of emulated top-k picks (seeded)
  uint32_t sink_tokens = 0;         // the first tokens, always picked
  uint32_t recent_tokens = 0;       // the most recent tokens, always picked
  double cluster_mean_tokens = 1;   // the rest: clusters of consecutive tokens with this mean length
};

struct ModelShape {
  std::string name, description;
  uint32_t hidden_size = 0, vocab_size = 0, num_layers = 0;
  uint64_t max_position_embeddings = 0;  // the longest context the model is trained for; 0: not given
  Precision weight_precision = Precision::fp8;
  MlaShape mla;
  IndexerShape indexer;
  LinearShape linear;
  MlpShape mlp;
  MtpShape mtp;
  DeploymentShape deployment;
  KernelTiling kernels;
  TopkSelection selection;
  std::vector<LayerShape> layers;  // expanded from the config's layer rules
  nlohmann::json resolved;         // the configuration as read, defaults included

  // What a trace of this model says about it (its metadata): each layer's kinds, the whole model's
  // parameter counts and what they include, and what one GPU holds.
  nlohmann::json describe() const;

  // One GPU's share.
  uint32_t local_heads() const { return mla.num_heads / deployment.attention_tensor_parallel; }
  uint32_t local_index_heads() const;
  uint32_t local_linear_heads() const { return linear.num_heads / deployment.attention_tensor_parallel; }
  uint32_t local_routed_experts() const { return mlp.routed_experts / deployment.expert_parallel; }

  // Layers that keep an indexer cache and run the indexer (full), and that read the KV cache (dsa).
  bool runs_indexer(int layer) const { return layers.at(layer).indexer == IndexerMode::full; }
  int count_layers(AttentionKind a) const;
  int count_indexer_layers() const;

  // Bytes per token per layer (pooling spreads one stored entry over pool_tokens tokens).
  double indexer_bytes_per_token(int layer) const;
  uint64_t kv_bytes_per_token(int layer) const;
  // Stored indexer entries for `context` tokens: complete pools plus the raw tail of the last one.
  uint64_t indexer_entries(uint64_t context) const;
  uint64_t linear_state_bytes_per_sequence(int layer) const;

  // Weight parameters held by this GPU, per layer and part.
  struct LayerParams {
    uint64_t attention = 0;  // MLA or linear projections
    uint64_t indexer = 0;
    uint64_t dense_mlp = 0;
    uint64_t router = 0, shared_experts = 0, routed_experts = 0;  // routed: all local experts
    uint64_t mtp_proj = 0;   // an MTP layer's eh_proj (2h -> h)
    uint64_t total() const { return attention + indexer + dense_mlp + router + shared_experts + routed_experts + mtp_proj; }
  };
  LayerParams layer_params(int layer) const;
  uint64_t routed_expert_params() const { return 3ull * hidden_size * mlp.moe_intermediate_size; }
  uint64_t embedding_params() const;  // embedding + LM head, split by attention TP
  // The whole model's parameters, every GPU's share together as a checkpoint counts them: the
  // embedding and LM head and every layer's attention, indexer and MLP (all routed experts in
  // `total`; the `active_experts` a token uses in `active`). Not counted: an MTP layer, a vision
  // tower, mHC's mixing weights, norms and biases.
  struct ParameterCount {
    uint64_t total = 0, active = 0;
  };
  ParameterCount parameters() const;
  uint64_t weight_bytes(uint64_t params) const;

  // Footprint on this GPU by tensor class (weights, kv_cache, indexer_cache, linear_state) for
  // `batch` sequences of `context` tokens.
  std::map<TensorClass, uint64_t> footprint(uint64_t context, uint64_t batch) const;
};

// Reads a workload file's root node (and marks every key it reads); call check_unused() after.
ModelShape load_model_shape(const config::Node& root);
// Loads a file, applies `--set` overrides, checks for unknown keys.
ModelShape load_model_shape_file(const std::string& file, const std::vector<std::string>& overrides = {});

uint32_t precision_bits(Precision p);
bool precision_from_string(const std::string& s, Precision& out);

}  // namespace indexsim::trace
